// @svc/client in a real browser (docs/client.md "Tabs"): three tabs of one page whose access tokens expire
// together refresh once between them (Web Locks and a BroadcastChannel; without Web Locks, the tab refused
// inside the grace window takes the pair another tab got), and none of them is signed out.
import type { BrowserContext, Page } from 'playwright-core';
import type { TestUser } from '@svc/core/testing';
import { expiredCopyOf } from '../../testing/client.js';
import { chromiumSuite, describeInChromium, loopbackContext, openReadyPage } from './browser.js';

/** The page: the bundled client on window, one client per tab, its signed-out signals recorded. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>client tabs</title>
<script type="module">
  import { createClient } from '/client.js';
  // ?async: each tab keeps its pair in its own storage whose writes take 300 ms (as an IndexedDB-backed one
  // may); only the BroadcastChannel carries pairs between tabs.
  let pair = null;
  const slowStorage = {
    get: () => pair,
    set: (next) => new Promise((done) => setTimeout(() => { pair = next; done(); }, 300)),
  };
  window.storage = location.search === '?async' ? slowStorage : undefined;
  window.client = createClient({ baseUrl: location.origin, storage: window.storage, crossTab: true });
  window.signedOut = [];
  window.client.onSignedOut((reason) => window.signedOut.push(reason));
  window.ready = true;
</script>`;

/** Calls GET /api/auth/user through the tab's client; the status. */
const callUser = (page: Page) =>
  page.evaluate(async () => (await (globalThis as any).client.fetch('/api/auth/user')).status as number);

describeInChromium('@svc/client in three browser tabs', () => {
  const suite = chromiumSuite({ page: PAGE, client: true });
  let alice: TestUser;

  beforeAll(async () => {
    alice = await suite.app.createUser({ username: 'alice' });
  });

  /** Three tabs of the page in one context (one origin, one localStorage), signed in from the first. */
  async function threeSignedInTabs(context: BrowserContext, query = ''): Promise<Page[]> {
    const tabs: Page[] = [];
    for (let i = 0; i < 3; i++) {
      const page = await context.newPage();
      await openReadyPage(page, `${suite.origin}/${query}`);
      tabs.push(page);
    }
    const status = await tabs[0]!.evaluate(
      async ([username, password]) => (await (globalThis as any).client.login(username, password)).status,
      [alice.username, alice.password],
    );
    expect(status).toBe('signed-in');
    for (const tab of tabs) {
      // With a per-tab storage, the pair arrives over the BroadcastChannel.
      await tab.waitForFunction(() => (globalThis as any).storage?.get() !== null);
      expect(await callUser(tab)).toBe(200);
    }
    return tabs;
  }

  /** Replaces the stored access token (shared by the tabs) by an expired copy of it. */
  async function expireAccessTokens(tab: Page): Promise<void> {
    const stored = JSON.parse(
      (await tab.evaluate(() => (globalThis as any).localStorage.getItem('svc.auth') as string | null))!,
    );
    const expired = { ...stored, accessToken: expiredCopyOf(stored.accessToken) };
    await tab.evaluate(
      (pair) => (globalThis as any).localStorage.setItem('svc.auth', pair),
      JSON.stringify(expired),
    );
  }

  async function expectOneRotationAndNoSignOut(tabs: Page[]) {
    const before = { refreshes: suite.server.refreshes(), rotations: suite.server.rotations() };
    await expireAccessTokens(tabs[0]!);
    expect(await Promise.all(tabs.map(callUser))).toEqual([200, 200, 200]);
    expect(suite.server.rotations() - before.rotations).toBe(1);
    for (const tab of tabs) expect(await tab.evaluate(() => (globalThis as any).signedOut)).toEqual([]);
    // Every tab's next call succeeds with the new pair, and nothing refreshes again.
    expect(await Promise.all(tabs.map(callUser))).toEqual([200, 200, 200]);
    expect(suite.server.rotations() - before.rotations).toBe(1);
    return suite.server.refreshes() - before.refreshes;
  }

  it('rotates once for three tabs whose access tokens expire together (Web Locks)', async () => {
    const context = await loopbackContext(suite.browser);
    const tabs = await threeSignedInTabs(context);
    expect(await tabs[0]!.evaluate(() => typeof (globalThis as any).navigator.locks?.request)).toBe(
      'function',
    );
    expect(await expectOneRotationAndNoSignOut(tabs)).toBe(1);
    await context.close();
  });

  it('rotates once when the new pair reaches the other tabs after the lock does', async () => {
    // The next tab holds the refresh lock before its own storage has the new pair: the refreshing tab's mark
    // (a lock named after the spent pair) makes it wait for the pair instead of spending the token again.
    const context = await loopbackContext(suite.browser);
    const tabs = await threeSignedInTabs(context, '?async');
    const pair = await tabs[0]!.evaluate(() => (globalThis as any).storage.get());
    const expired = { ...pair, accessToken: expiredCopyOf(pair.accessToken) };
    for (const tab of tabs) await tab.evaluate((p) => (globalThis as any).storage.set(p), expired);
    const before = suite.server.refreshes();
    expect(await Promise.all(tabs.map(callUser))).toEqual([200, 200, 200]);
    expect(suite.server.refreshes() - before).toBe(1);
    for (const tab of tabs) expect(await tab.evaluate(() => (globalThis as any).signedOut)).toEqual([]);
    await context.close();
  });

  it('signs every tab out when one tab logs out', async () => {
    const context = await loopbackContext(suite.browser);
    const tabs = await threeSignedInTabs(context);
    await tabs[1]!.evaluate(() => (globalThis as any).client.logout());
    for (const tab of tabs) {
      await tab.waitForFunction(() => (globalThis as any).signedOut.length > 0);
      expect(await tab.evaluate(() => (globalThis as any).signedOut)).toEqual(['logout']);
    }
    expect(await Promise.all(tabs.map(callUser))).toEqual([401, 401, 401]);
    await context.close();
  });

  it('without Web Locks, a tab refused inside the grace window takes the pair another tab got', async () => {
    const context = await loopbackContext(suite.browser);
    await context.addInitScript(() => {
      Object.defineProperty((globalThis as any).Navigator.prototype, 'locks', { get: () => undefined });
    });
    const tabs = await threeSignedInTabs(context);
    expect(await tabs[0]!.evaluate(() => (globalThis as any).navigator.locks)).toBeUndefined();
    // Tabs may race here: usually two refreshes reach the server, one of them refused inside the grace window.
    expect(await expectOneRotationAndNoSignOut(tabs)).toBeGreaterThanOrEqual(1);
    await context.close();
  });
});
