// The admin console's organizations, webhooks, passkey sign-in and appearance pages in Chromium (SPEC-3 §6,
// docs/admin-console.md), served by the app at /admin/ under its Content-Security-Policy on localhost (a secure
// context, so the DevTools protocol's virtual authenticator can hold a passkey): sign in with a passkey; add a
// member to an organization (by invitation, accepted), change and remove them, the last-owner refusal shown,
// delete it; create a webhook, send a test to a real receiver on loopback, redeliver the delivery; switch the
// appearance. Each action is checked through the API; axe-core finds no serious or critical violation on any
// page; screenshots go to test-artifacts/admin-console-more/ (git-ignored). A second app on the same database,
// with those features off, shows none of their pages.
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { eq } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { startTestApp, type LoggedInClient, type TestUser } from '@svc/core/testing';
import type { OrganizationInvitationMail } from '../../packages/core/src/kernel/ports.js';
import { dbOf, enrolTotp } from '../../testing/mfa.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../testing/webhook-receiver.js';
import { chromiumSuite, describeInChromium, passkeyPage } from './browser.js';

const REPO = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../..');
const ARTIFACTS = join(REPO, 'test-artifacts', 'admin-console-more');
/** axe-core's browser build, from node_modules: injected into the page, nothing downloaded. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** The performance mark the console sets when the first users list is on screen (ui.tsx, bench/console-size.mjs). */
const FIRST_PAGE_MARK = 'svc-console:first-page';

/** Waits (up to 10 s) until `read` gives a value `matches` accepts; then asserts it, showing the last value. */
async function until<T>(read: () => Promise<T>, matches: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 100 && !matches(value); i++) {
    await new Promise((done) => setTimeout(done, 100));
    value = await read();
  }
  expect({ value, matches: matches(value) }).toEqual({ value, matches: true });
  return value;
}

/** axe-core on the page as it is: serious and critical violations, by rule and the elements involved. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await (globalThis as any).axe.run((globalThis as any).document, {
      resultTypes: ['violations'],
    });
    return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[]).map(
      (v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }),
    );
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.targets.join(', ')}`);
}

/** The axe check and a screenshot of the page under `name`. */
async function checkPage(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  expect({ page: name, violations: await seriousViolations(page) }).toEqual({ page: name, violations: [] });
}

describeInChromium('admin console: organizations, webhooks, passkeys, appearance (SPEC-3 §6)', () => {
  const mails: OrganizationInvitationMail[] = [];
  const suite = chromiumSuite({
    passkeys: true,
    cookieSessions: true,
    settings: {
      mfa_enabled: true,
      organizations_enabled: true,
      webhooks_enabled: true,
      // SPEC-3 §3: the receiver is on loopback, a private target (tests only).
      webhooks_allow_private_targets: true,
      // A failed attempt waits an hour, so the delivery stays pending until the console redelivers it.
      webhook_retry_schedule: '3600',
    },
    app: {
      mailer: {
        sendPasswordReset: () => undefined,
        sendEmailVerification: () => undefined,
        sendInvitation: () => undefined,
        sendOrganizationInvitation: (mail) => void mails.push(mail),
      },
    },
  });
  let root: TestUser;
  let rootApi: LoggedInClient;
  let api: LoggedInClient;
  let checker: TestUser;
  let dora: TestUser;
  let receiver: WebhookReceiver;
  let page: Page;
  const refusals: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    receiver = await startWebhookReceiver();
    root = await suite.app.createUser({ username: 'root', isSuperuser: true });
    rootApi = await suite.app.loginAs(root);
    // A second superuser checks through the API what the console did.
    checker = await suite.app.createUser({ username: 'checker', isSuperuser: true });
    api = await suite.app.loginAs(checker);
    dora = await suite.app.createUser({ username: 'dora', email: 'dora@example.com' });
    // SPEC-3 §2: accepting an invitation needs the invited address verified.
    const { orm, core } = dbOf(suite.app);
    await orm.update(core.user).set({ emailVerifiedAt: new Date() }).where(eq(core.user.id, dora.id));
    page = await passkeyPage(suite.browser, suite.origin);
    await page.setViewportSize({ width: 1280, height: 900 });
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refusals.push(message.text());
    });
  });
  afterAll(async () => {
    await page?.context().close();
    await receiver?.close();
  });

  it('signs a superuser in with a passkey (virtual authenticator), checked through the API', async () => {
    await page.goto(`${suite.origin}/admin/`);
    await page.getByRole('button', { name: 'Continue with a passkey' }).waitFor();
    // SPEC-3 §6 names the form's button "Sign in": with passkeys on it is still the one button of that name,
    // also for a lookup that matches part of a name.
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(1);
    await checkPage(page, '01-sign-in-passkey');
    // root's passkey, registered by this page's authenticator (SPEC-2 section 6) with a bearer token: the
    // console itself registers none (it is the user page's to list a user's passkeys).
    const registered = await page.evaluate(async (token) => {
      const auth = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
      const started = await fetch('/api/auth/passkeys/register/options', {
        method: 'POST',
        headers: auth,
        body: '{}',
      }).then((r) => r.json() as Promise<{ data: unknown }>);
      const P = (globalThis as any).PublicKeyCredential;
      const credential = await (globalThis as any).navigator.credentials.create({
        publicKey: P.parseCreationOptionsFromJSON(started.data),
      });
      const done = await fetch('/api/auth/passkeys/register', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ response: credential.toJSON(), name: 'console test' }),
      });
      return done.status;
    }, rootApi.accessToken);
    expect(registered).toBe(201);

    await page.getByRole('button', { name: 'Continue with a passkey' }).click();
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'dora', exact: true }).waitFor();
    const passkeys = (await rootApi.get('/api/auth/passkeys')).body.data as { lastUsedAt: string | null }[];
    expect(passkeys).toEqual([expect.objectContaining({ lastUsedAt: expect.any(String) })]);
    // The mark bench/console-size.mjs reads: set once, when the first users list is on screen.
    expect(await page.evaluate((mark) => performance.getEntriesByName(mark).length, FIRST_PAGE_MARK)).toBe(1);
    await page.screenshot({
      path: join(ARTIFACTS, 'readme.png'),
      clip: { x: 0, y: 0, width: 1280, height: 500 },
    });
  });

  it('creates an organization, adds a member by invitation, changes and removes them, then deletes it', async () => {
    await page.getByRole('link', { name: 'Organizations' }).click();
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor();
    const create = page.getByRole('region', { name: 'Create organization' });
    await create.getByLabel('Name').fill('Acme Inc');
    await create.getByLabel('Slug').fill('acme');
    await create.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Acme Inc', level: 1 }).waitFor();
    const listed = (await api.get('/api/admin/organizations?search=acme')).body.data.items as {
      id: string;
      memberCount: number;
    }[];
    expect(listed).toEqual([expect.objectContaining({ slug: 'acme', name: 'Acme Inc', memberCount: 1 })]);
    const orgId = listed[0]!.id;
    expect(page.url()).toContain(`/admin/organizations/${orgId}`);

    // Add dora with the role admin: SPEC-3 §2 adds members by invitation; she accepts with her link.
    const invite = page.getByRole('region', { name: 'Add a member by invitation' });
    await invite.getByLabel('Email').fill('dora@example.com');
    await invite.getByLabel('Role').selectOption('admin');
    await invite.getByRole('button', { name: 'Invite' }).click();
    await invite.getByRole('status').filter({ hasText: 'Invited dora@example.com as admin.' }).waitFor();
    await page.getByRole('cell', { name: 'dora@example.com', exact: true }).waitFor();
    const pending = (await api.get(`/api/organizations/${orgId}/invitations`)).body.data as unknown[];
    expect(pending).toEqual([expect.objectContaining({ email: 'dora@example.com', role: 'admin' })]);
    await until(
      async () => mails.length,
      (count) => count === 1,
    );
    const token = new URL(mails[0]!.url).searchParams.get('token')!;
    const doraApi = await suite.app.loginAs(dora);
    expect((await doraApi.post('/api/organizations/invitations/accept', { token })).status).toBe(200);

    await page.reload();
    const doraRole = page.getByRole('form', { name: 'Change role of dora' });
    await doraRole.waitFor();
    expect(await doraRole.getByLabel('Role').inputValue()).toBe('admin');
    await checkPage(page, '02-organization');

    // The last owner cannot step down: the API's message is shown, and nothing changed.
    const rootRole = page.getByRole('form', { name: 'Change role of root' });
    await rootRole.getByLabel('Role').selectOption('member');
    await rootRole.getByRole('button', { name: 'Save' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'An organization with members needs an owner' })
      .waitFor();
    const members = async () =>
      (
        (await api.get(`/api/organizations/${orgId}/members`)).body.data.items as {
          username: string;
          role: string;
        }[]
      )
        .map((m) => `${m.username}:${m.role}`)
        .sort();
    expect(await members()).toEqual(['dora:admin', 'root:owner']);

    await doraRole.getByLabel('Role').selectOption('member');
    await doraRole.getByRole('button', { name: 'Save' }).click();
    await until(members, (list) => JSON.stringify(list) === JSON.stringify(['dora:member', 'root:owner']));

    await page.getByRole('button', { name: 'Remove dora' }).click();
    await until(members, (list) => JSON.stringify(list) === JSON.stringify(['root:owner']));

    // The list keeps its search and page in the URL.
    await page.getByRole('link', { name: 'Back to the list' }).click();
    await page.getByLabel('Search').fill('acm');
    await page.getByLabel('Search').press('Enter');
    await page.waitForURL(/\/admin\/organizations\?search=acm/);
    await page.reload();
    await page.getByRole('link', { name: 'Acme Inc' }).waitFor();
    await checkPage(page, '03-organizations');

    await page.getByRole('link', { name: 'Acme Inc' }).click();
    await page.getByRole('button', { name: 'Delete organization' }).click();
    const dialog = page.getByRole('alertdialog');
    await dialog.waitFor();
    expect((await api.get(`/api/admin/organizations/${orgId}`)).status).toBe(200);
    await dialog.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor();
    expect((await api.get(`/api/admin/organizations/${orgId}`)).status).toBe(404);
  });

  it('creates a webhook (its secret shown once), edits it, sends a test, redelivers a delivery', async () => {
    // The receiver refuses the first attempt (500), so the delivery waits for its retry; then it answers 204.
    receiver.answer('/hook', 500, 204);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    const create = page.getByRole('region', { name: 'Create webhook' });
    await create.getByLabel('URL').fill(receiver.url('/hook'));
    await create.getByLabel('Description').fill('console test');
    await create.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await create.getByLabel('Secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    const hooks = (await api.get('/api/admin/webhooks')).body.data as { id: string; url: string }[];
    expect(hooks).toEqual([
      expect.objectContaining({ url: receiver.url('/hook'), events: ['*'], enabled: true }),
    ]);
    expect(JSON.stringify(hooks)).not.toContain(secret);
    const id = hooks[0]!.id;
    await checkPage(page, '04-webhooks');

    await create.getByRole('link', { name: receiver.url('/hook') }).click();
    await page.getByRole('heading', { name: receiver.url('/hook'), level: 1 }).waitFor();
    await page.getByRole('checkbox', { name: 'All events (*)' }).uncheck();
    await page.getByRole('checkbox', { name: 'user.created' }).check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await api.get(`/api/admin/webhooks/${id}`)).body.data.events).toEqual(['user.created']);

    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('status').filter({ hasText: 'Test event queued.' }).waitFor();
    await until(
      async () => receiver.at('/hook').length,
      (count) => count === 1,
    );
    const first = receiver.at('/hook')[0]!;
    expect(first.json).toMatchObject({ type: 'webhook.test', data: { webhookId: id } });

    // The failed attempt, found with the status filter (kept in the URL).
    await page.getByLabel('Status').selectOption('pending');
    await page.waitForURL(/status=pending/);
    await until(
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return page.locator('section[aria-labelledby=deliveries] tbody tr').allTextContents();
      },
      (rows) => rows.length === 1 && rows[0]!.includes('webhook.test') && rows[0]!.includes('500'),
    );
    await checkPage(page, '05-webhook');
    await page.getByRole('button', { name: /^Redeliver webhook\.test/ }).click();
    await page.getByRole('status').filter({ hasText: 'Delivery queued again.' }).waitFor();
    await until(
      async () => receiver.at('/hook').length,
      (count) => count === 2,
    );
    // A new attempt of the same event: the same webhook-id (SPEC-3 §3).
    expect(receiver.at('/hook')[1]!.headers['webhook-id']).toBe(first.headers['webhook-id']);
    await until(
      async () =>
        (
          (await api.get(`/api/admin/webhooks/${id}/deliveries?status=succeeded`)).body.data.items as {
            type: string;
          }[]
        ).map((d) => d.type),
      (types) => JSON.stringify(types) === JSON.stringify(['webhook.test']),
    );

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = await page.getByLabel('Secret').inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
  });

  it("switches the user's appearance (theme, density), stored in their settings and applied", async () => {
    await page.getByRole('link', { name: 'Appearance' }).click();
    await page.getByRole('heading', { name: 'Appearance', level: 1 }).waitFor();
    const before = await page.evaluate(() => {
      const window = globalThis as any;
      return window.getComputedStyle(window.document.body).backgroundColor as string;
    });
    await page.getByLabel('Theme').selectOption('dark');
    await page.getByLabel('Density').selectOption('compact');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const settings = (await rootApi.get('/api/auth/user/settings')).body.data;
    expect(settings.appearance).toMatchObject({ theme: 'dark', density: 'compact' });
    const applied = () =>
      page.evaluate(() => {
        const window = globalThis as any;
        const root = window.document.documentElement;
        return {
          theme: root.dataset.theme as string,
          density: root.dataset.density as string,
          background: window.getComputedStyle(window.document.body).backgroundColor as string,
        };
      });
    expect(await applied()).toEqual({ theme: 'dark', density: 'compact', background: 'rgb(13, 17, 23)' });
    expect(before).not.toBe('rgb(13, 17, 23)');
    await checkPage(page, '06-appearance');
    // Read back from the settings on the next load.
    await page.goto(`${suite.origin}/admin/users`);
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await until(applied, (value) => value.theme === 'dark' && value.density === 'compact');
    await checkPage(page, '07-users-dark');
    expect(refusals).toEqual([]);
  });

  it('offers the passkey as the MFA step of a password sign-in', async () => {
    await enrolTotp(suite.app, root);
    const before = (await rootApi.get('/api/auth/passkeys')).body.data[0].lastUsedAt as string;
    await page.getByRole('button', { name: 'Sign out' }).click();
    // The sign-in form replaces the users list (whose forms have their own "Username" fields) once signed out.
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await page.getByLabel('Username').fill(root.username);
    await page.getByLabel('Password').fill(root.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Code').waitFor();
    await checkPage(page, '08-mfa-passkey');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    // The passkey answered the step: its last use moved (read with a session made before the sign-out).
    await until(
      async () => (await rootApi.get('/api/auth/passkeys')).body.data[0].lastUsedAt as string,
      (value) => value > before,
    );
  });

  it('hides the pages of switched-off features (organizations, webhooks, passkeys)', async () => {
    // A second app on the same database, with the defaults: no organizations, webhooks or passkeys.
    const plain = await startTestApp({
      database: suite.database,
      settings: { cookie_sessions_enabled: true },
    });
    const context = await suite.browser.newContext();
    try {
      context.setDefaultTimeout(10_000);
      const tab = await context.newPage();
      await tab.goto(`${plain.url}/admin/`);
      await tab.getByLabel('Username').fill(checker.username);
      await tab.getByLabel('Password').fill(checker.password);
      // Once the page's requests are over (the passkey probe among them): no passkey button.
      await tab.waitForLoadState('networkidle');
      expect(await tab.getByRole('button', { name: 'Continue with a passkey' }).count()).toBe(0);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('link', { name: 'Health and version' }).waitFor();
      const links = await tab.getByRole('navigation').getByRole('link').allTextContents();
      expect(links).toContain('Users');
      expect(links).not.toContain('Organizations');
      expect(links).not.toContain('Webhooks');
      // A shared address of a hidden page shows the users list, not a broken page.
      await tab.goto(`${plain.url}/admin/webhooks`);
      await tab.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
      expect(await tab.getByRole('alert').count()).toBe(0);
    } finally {
      await context.close();
      await plain.close();
    }
  });

  afterAll(() => {
    // The README's and docs/admin-console.md's picture is this test's users list (copied by hand when the
    // console's look changes: docs/images/admin-console.png).
    if (process.env.SVC_UPDATE_DOCS_IMAGES === '1')
      copyFileSync(join(ARTIFACTS, 'readme.png'), join(REPO, 'docs', 'images', 'admin-console.png'));
  });
});
