// @svc/react over @svc/client's cookie mode in a real browser (docs/react.md, SPEC-3 section 5): three tabs of
// one React page (test/browser/react-page.ts). A sign-in in one tab is every tab's, and no token ever reaches
// script-readable storage; signing out in one tab signs the others out; a session cookie that expired in all
// tabs at once is refreshed once between them (the server's refresh requests counted); a permission change
// pushed by the event stream re-renders `useCan`.
import type { BrowserContext, Page } from 'playwright-core';
import type { TestUser } from '@svc/core/testing';
import { enrolTotp, totpCode } from '../../testing/mfa.js';
import { chromiumSuite, describeInChromium, loopbackContext } from './browser.js';

const PAGE = `<!doctype html><meta charset="utf-8"><title>react tabs</title>
<div id="root"></div><script type="module" src="/app.js"></script>`;

const statusOf = (tab: Page) => tab.locator('#status').textContent();

/**
 * The context's cookie `name`, under its `__Host-` or `__Secure-` name when the server made it Secure (SPEC-3
 * section 5: without a `public_url` on loopback http, the test app's cookies are Secure).
 */
async function cookieOf(context: BrowserContext, name: string) {
  const cookies = await context.cookies();
  return cookies.find((cookie) => [name, `__Host-${name}`, `__Secure-${name}`].includes(cookie.name));
}

/** Waits until every tab shows `status`. */
async function everyTabShows(tabs: Page[], status: string): Promise<void> {
  for (const tab of tabs) await tab.locator('#status', { hasText: status }).waitFor();
}

describeInChromium('@svc/react in three browser tabs, cookie sessions', () => {
  const suite = chromiumSuite({
    page: PAGE,
    reactPage: new URL('./react-page.ts', import.meta.url).pathname,
    cookieSessions: true,
    settings: { events_broadcast_enabled: true, mfa_enabled: true },
  });
  let alice: TestUser;

  beforeAll(async () => {
    alice = await suite.app.createUser({ username: 'alice' });
  });

  /** Three tabs of the page in one context (one cookie jar), signed in through the form of the first. */
  async function threeSignedInTabs(context: BrowserContext): Promise<Page[]> {
    const tabs: Page[] = [];
    for (let i = 0; i < 3; i++) {
      const tab = await context.newPage();
      await tab.goto(`${suite.origin}/`);
      await tab.waitForFunction(() => (globalThis as any).ready === true);
      tabs.push(tab);
    }
    await everyTabShows(tabs, 'signed-out');
    await tabs[0]!.fill('#login input[name=username]', alice.username);
    await tabs[0]!.fill('#login input[name=password]', alice.password);
    await tabs[0]!.click('#login button');
    // The other tabs hear of the login on the BroadcastChannel and read the user with the shared cookies.
    await everyTabShows(tabs, 'signed-in');
    for (const tab of tabs) expect(await tab.locator('#user').textContent()).toBe('alice');
    return tabs;
  }

  it('signs in every tab with HttpOnly cookies and no token in storage; signing out in one signs out all', async () => {
    const context = await loopbackContext(suite.browser);
    const tabs = await threeSignedInTabs(context);

    const sessionCookie = await cookieOf(context, 'svc_session');
    expect(sessionCookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    const refreshCookie = await cookieOf(context, 'svc_refresh');
    expect(refreshCookie).toMatchObject({ httpOnly: true, path: '/api/auth/session' });
    expect(await cookieOf(context, 'svc_csrf')).toMatchObject({ httpOnly: false });
    const session = sessionCookie!.value;
    const refresh = refreshCookie!.value;
    for (const tab of tabs) {
      // Nothing in either storage, and the tokens are not readable by the page's scripts at all.
      const seen = await tab.evaluate(() => {
        const g = globalThis as any;
        const dump = (storage: any) =>
          Array.from({ length: storage.length }, (_, i) => [storage.key(i), storage.getItem(storage.key(i))]);
        return {
          local: dump(g.localStorage),
          session: dump(g.sessionStorage),
          cookie: g.document.cookie as string,
        };
      });
      expect({ local: seen.local, session: seen.session }).toEqual({ local: [], session: [] });
      expect(seen.cookie).not.toContain(session);
      expect(seen.cookie).not.toContain(refresh);
    }

    await tabs[1]!.click('#sign-out');
    await everyTabShows(tabs, 'signed-out');
    for (const tab of tabs) expect(await statusOf(tab)).toBe('signed-out');
    // DELETE /auth/session ended the session on the server: its cookie, sent again, is refused.
    const replay = await suite.app.get('/api/auth/user', {
      headers: { cookie: `${sessionCookie!.name}=${session}` },
    });
    expect(replay.status).toBe(401);
    expect(await cookieOf(context, 'svc_session')).toBeUndefined();
    expect(await cookieOf(context, 'svc_csrf')).toBeUndefined();
    await context.close();
  });

  it('refreshes once for three tabs whose session cookie expired together', async () => {
    const context = await loopbackContext(suite.browser);
    const tabs = await threeSignedInTabs(context);
    const signedOut: string[] = [];
    for (const tab of tabs) {
      await tab.evaluate(() => {
        const g = globalThis as any;
        g.signedOut = [];
        g.client.onSignedOut((reason: string) => g.signedOut.push(reason));
      });
    }
    // The browser drops `svc_session` when the access token expires (the cookie expires with it): the next
    // request of every tab goes without it and is answered 401; the tabs share one refresh.
    await context.clearCookies({ name: (await cookieOf(context, 'svc_session'))!.name });
    const before = { refreshes: suite.server.refreshes(), rotations: suite.server.rotations() };
    await Promise.all(tabs.map((tab) => tab.evaluate(() => (globalThis as any).session.refresh())));
    for (const tab of tabs) expect(await statusOf(tab)).toBe('signed-in');
    expect(suite.server.refreshes() - before.refreshes).toBe(1);
    expect(suite.server.rotations() - before.rotations).toBe(1);
    // Each tab's next request uses the new cookies; nothing refreshes again, and no tab was signed out.
    const statuses = await Promise.all(
      tabs.map((tab) =>
        tab.evaluate(async () => (await (globalThis as any).client.fetch('/api/auth/user')).status as number),
      ),
    );
    expect(statuses).toEqual([200, 200, 200]);
    expect(suite.server.refreshes() - before.refreshes).toBe(1);
    for (const tab of tabs) signedOut.push(...(await tab.evaluate(() => (globalThis as any).signedOut)));
    expect(signedOut).toEqual([]);
    await context.close();
  });

  it('takes the MFA step with X-Svc-Session: cookie, the cookies set only once it is done', async () => {
    const carol = await suite.app.createUser({ username: 'carol' });
    const { secret } = await enrolTotp(suite.app, carol);
    const context = await loopbackContext(suite.browser);
    const tab = await context.newPage();
    await tab.goto(`${suite.origin}/`);
    await tab.locator('#status', { hasText: 'signed-out' }).waitFor();
    await tab.fill('#login input[name=username]', carol.username);
    await tab.fill('#login input[name=password]', carol.password);
    await tab.click('#login button');
    await tab.locator('#status', { hasText: 'mfa-required' }).waitFor();
    expect(await cookieOf(context, 'svc_session')).toBeUndefined();

    const verify = (code: string) =>
      tab.evaluate(
        (c) =>
          (globalThis as any).session.mfa.verify(c).then(
            (status: string) => status,
            (error: { code: string }) => error.code,
          ),
        code,
      );
    expect(await verify(totpCode(secret, 5))).toBe('mfa.code_invalid');
    expect(await statusOf(tab)).toBe('mfa-required');
    expect(await verify(totpCode(secret, 1))).toBe('signed-in');
    await tab.locator('#user', { hasText: 'carol' }).waitFor();
    expect(await cookieOf(context, 'svc_session')).toMatchObject({ httpOnly: true });
    expect(await tab.evaluate(() => (globalThis as any).localStorage.length)).toBe(0);
    await context.close();
  });

  it('works the same with React 18, the oldest of its peer range', async () => {
    const context = await loopbackContext(suite.browser);
    const tab = await context.newPage();
    await tab.goto(`${suite.origin}/react18`);
    await tab.waitForFunction(() => (globalThis as any).ready === true);
    expect(await tab.evaluate(() => (globalThis as any).reactVersion as string)).toMatch(/^18\./);
    await tab.locator('#status', { hasText: 'signed-out' }).waitFor();
    await tab.fill('#login input[name=username]', alice.username);
    await tab.fill('#login input[name=password]', alice.password);
    await tab.click('#login button');
    await tab.locator('#user', { hasText: 'alice' }).waitFor();
    expect(await tab.locator('#can').textContent()).toBe('cannot edit');
    await tab.click('#sign-out');
    await tab.locator('#status', { hasText: 'signed-out' }).waitFor();
    await context.close();
  });

  it('re-renders useCan in every tab when the event stream says the permissions changed', async () => {
    const context = await loopbackContext(suite.browser);
    const tabs = await threeSignedInTabs(context);
    // Each tab's event stream is open once its snapshot frame arrived.
    for (const tab of tabs) await tab.waitForFunction(() => (globalThis as any).heard.includes('snapshot'));
    for (const tab of tabs) expect(await tab.locator('#can').textContent()).toBe('cannot edit');

    const root = await suite.app.loginAs(await suite.app.createUser({ username: 'root', isSuperuser: true }));
    const created = await root.post('/api/admin/permissions/permissions', {
      codename: 'notes.edit',
      description: 'Edit notes',
    });
    expect(created.status).toBe(201);
    const granted = await root.put(`/api/admin/permissions/users/${alice.id}/permissions`, {
      permissionIds: [created.body.data.id],
    });
    expect(granted.status).toBe(200);

    for (const tab of tabs) {
      await tab.locator('#can', { hasText: 'can edit' }).waitFor();
      expect(await tab.locator('#can').textContent()).toBe('can edit');
      expect(await tab.evaluate(() => (globalThis as any).heard)).toContain('user_permissions_changed');
      expect(await tab.evaluate(() => (globalThis as any).reactVersion as string)).toMatch(/^19\./);
    }
    await context.close();
  });
});
