// The admin console in Chromium (SPEC-3 §6, docs/admin-console.md), served by the app itself at /admin/ on its
// own origin with its Content-Security-Policy: password sign-in with the MFA step, a non-superuser refused,
// each page's main action done through the UI and checked through the API, axe-core on each page (no serious
// or critical violation), the texts in German for a German browser. Screenshots of each page are written to
// test-artifacts/admin-console/ (git-ignored). One app and one Chromium for the file.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { LoggedInClient, TestUser } from '@svc/core/testing';
import { enrolTotp } from '../../testing/mfa.js';
import { chromiumSuite, describeInChromium } from './browser.js';

const REPO = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../..');
const ARTIFACTS = join(REPO, 'test-artifacts', 'admin-console');
/** axe-core's browser build, from node_modules: injected into the page, nothing downloaded. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** A context in `locale` that may fetch only from the app's origin, collecting CSP refusals of its pages. */
async function consoleContext(browser: Browser, origin: string, locale = 'en-US') {
  const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(10_000);
  await context.route(
    (url) => url.origin !== origin,
    (route) => route.abort(),
  );
  const refusals: string[] = [];
  context.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) refusals.push(message.text());
  });
  return { context, refusals };
}

/** Waits (up to 10 s) until `read` gives `expected`; then asserts it, so a failure shows the last value. */
async function until<T>(read: () => Promise<T>, expected: T | ((value: T) => boolean)): Promise<void> {
  const matches = (value: T) =>
    typeof expected === 'function' ? (expected as (value: T) => boolean)(value) : value === expected;
  let value = await read();
  for (let i = 0; i < 100 && !matches(value); i++) {
    await new Promise((done) => setTimeout(done, 100));
    value = await read();
  }
  if (typeof expected === 'function')
    expect({ value, matches: matches(value) }).toEqual({ value, matches: true });
  else expect(value).toEqual(expected);
}

/** axe-core on the page as it is: serious and critical violations, by rule and the elements involved. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (an inline <script> would
  // be refused, as it should be).
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

describeInChromium('admin console (SPEC-3 §6) in Chromium', () => {
  const suite = chromiumSuite({
    cookieSessions: true,
    settings: {
      mfa_enabled: true,
      activity_log_enabled: true,
      activity_log_sync: true,
      registration_enabled: true,
    },
  });
  let admin: TestUser;
  let backupCodes: string[];
  let api: LoggedInClient;
  let context: BrowserContext;
  let page: Page;
  let refusals: string[];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    admin = await suite.app.createUser({ username: 'root', isSuperuser: true });
    ({ backupCodes } = await enrolTotp(suite.app, admin));
    // A second superuser without MFA checks through the API what the console did.
    const checker = await suite.app.createUser({ username: 'checker', isSuperuser: true });
    api = await suite.app.loginAs(checker);
    await suite.app.createUser({ username: 'plain-bob', email: 'bob@example.com' });
    const permission = await api.post('/api/admin/permissions/permissions', {
      codename: 'notes.read',
      description: 'Read notes',
    });
    expect(permission.status).toBe(201);
    ({ context, page, refusals } = await (async () => {
      const made = await consoleContext(suite.browser, suite.origin);
      return { ...made, page: await made.context.newPage() };
    })());
  });
  afterAll(async () => {
    await context?.close();
  });

  it('refuses a user who is not a superuser, saying so, and keeps no session', async () => {
    const other = await consoleContext(suite.browser, suite.origin);
    const tab = await other.context.newPage();
    await tab.goto(`${suite.origin}/admin/`);
    // By keyboard only: the form takes the focus, Tab moves on, Enter submits.
    await tab.getByLabel('Username').waitFor();
    await tab.keyboard.type('plain-bob');
    await tab.keyboard.press('Tab');
    await tab.keyboard.type('correct-horse-battery');
    await tab.keyboard.press('Enter');
    await tab.getByRole('alert').filter({ hasText: 'Only superusers' }).waitFor();
    await tab.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await tab.getByRole('link', { name: 'Users' }).count()).toBe(0);
    // The session the sign-in made was ended (DELETE /auth/session clears the cookies).
    await until(
      async () => (await other.context.cookies()).filter((c) => /svc_session$/.test(c.name)).length,
      0,
    );
    await other.context.close();
  });

  it('signs a superuser in with the password and the MFA step, then shows the users list', async () => {
    await page.goto(`${suite.origin}/admin/`);
    await checkPage(page, '01-sign-in');
    await page.getByLabel('Username').fill('root');
    await page.getByLabel('Password').fill(admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Code').fill(backupCodes[0]!);
    await checkPage(page, '02-mfa');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Users' }).waitFor();
    await page.getByRole('cell', { name: 'plain-bob' }).waitFor();
    await checkPage(page, '03-users');
  });

  it('searches users by any part of the name, the state in the URL; creates a user checked through the API', async () => {
    await page.getByLabel('Search').fill('ain-b');
    await page.getByLabel('Search').press('Enter');
    await page.waitForURL(/\/admin\/users\?search=ain-b/);
    await until(() => page.locator('tbody tr').count(), 1);
    await page.getByRole('cell', { name: 'plain-bob' }).waitFor();
    // A reload of the shared URL shows the same view.
    await page.reload();
    await until(() => page.getByLabel('Search').inputValue(), 'ain-b');
    await until(() => page.locator('tbody tr').count(), 1);

    const create = page.getByRole('region', { name: 'Create user' });
    await create.getByLabel('Username').fill('carol');
    await create.getByLabel('Password').fill('carol-long-password-1');
    await create.getByLabel('Email').fill('carol@example.com');
    await create.getByLabel('First name').fill('Carol');
    await create.getByRole('button', { name: 'Create' }).click();
    await create.getByRole('status').filter({ hasText: 'Created carol.' }).waitFor();
    const listed = await api.get('/api/admin/user/?search=carol');
    expect(listed.body.data.items).toEqual([
      expect.objectContaining({
        username: 'carol',
        email: 'carol@example.com',
        firstName: 'Carol',
        isStaff: false,
      }),
    ]);

    // The API's own message for a refusal: the same username again.
    await create.getByLabel('Username').fill('carol');
    await create.getByLabel('Password').fill('carol-long-password-1');
    await create.getByRole('button', { name: 'Create' }).click();
    await create.getByRole('alert').waitFor();
    expect((await create.getByRole('alert').textContent())!.length).toBeGreaterThan(0);
  });

  it("changes a user's flag on their page, then deletes them after a confirmation", async () => {
    await page.getByLabel('Search').fill('carol');
    await page.getByLabel('Search').press('Enter');
    await page.getByRole('link', { name: 'carol' }).click();
    await page.getByRole('heading', { name: 'carol', level: 1 }).waitFor();
    await checkPage(page, '04-user');
    const id = (await api.get('/api/admin/user/?search=carol')).body.data.items[0].id as string;
    expect(page.url()).toContain(`/admin/users/${id}`);

    await page.getByRole('checkbox', { name: 'Staff' }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await api.get(`/api/admin/user/${id}`)).body.data).toMatchObject({
      isStaff: true,
      isActive: true,
    });

    await page.getByRole('button', { name: 'Deactivate' }).click();
    const asked = page.getByRole('alertdialog');
    await asked.getByText('Deactivate carol?', { exact: false }).waitFor();
    // Nothing changes before the confirmation.
    expect((await api.get(`/api/admin/user/${id}`)).body.data.isActive).toBe(true);
    await asked.getByRole('button', { name: 'Deactivate' }).click();
    await page.getByRole('button', { name: 'Activate' }).waitFor();
    expect((await api.get(`/api/admin/user/${id}`)).body.data.isActive).toBe(false);

    await page.getByRole('button', { name: 'Delete user' }).click();
    const dialog = page.getByRole('alertdialog');
    await dialog.waitFor();
    // Nothing is deleted before the confirmation.
    expect((await api.get(`/api/admin/user/${id}`)).status).toBe(200);
    await dialog.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    expect((await api.get(`/api/admin/user/${id}`)).status).toBe(404);
  });

  it('creates a group and grants it a permission, checked through the API', async () => {
    await page.getByRole('link', { name: 'Groups and permissions' }).click();
    await page.getByRole('heading', { name: 'Groups and permissions', level: 1 }).waitFor();
    const create = page.getByRole('region', { name: 'Create group' });
    await create.getByLabel('Name').fill('editors');
    await create.getByRole('button', { name: 'Create group' }).click();
    await create.getByRole('status').filter({ hasText: 'Created editors.' }).waitFor();
    const grant = page.getByRole('form', { name: 'Grant a permission to editors' });
    await grant.getByLabel('Permission').selectOption({ label: 'notes.read' });
    await grant.getByRole('button', { name: 'Grant' }).click();
    await grant.getByRole('status').filter({ hasText: 'Granted notes.read to editors.' }).waitFor();
    const groups = (await api.get('/api/admin/permissions/groups')).body.data as {
      name: string;
      permissions: { codename: string }[];
    }[];
    expect(groups.find((group) => group.name === 'editors')?.permissions.map((p) => p.codename)).toEqual([
      'notes.read',
    ]);
    await checkPage(page, '05-groups');
  });

  it('filters the activity log, the filters in the URL, with keyset paging', async () => {
    await page.getByRole('link', { name: 'Activity log' }).click();
    await page.getByRole('heading', { name: 'Activity log', level: 1 }).waitFor();
    await page.getByLabel('Method').fill('PUT');
    await page.getByLabel('Path contains').fill('/admin/permissions/groups');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/method=PUT/);
    expect(page.url()).toContain('pathContains=%2Fadmin%2Fpermissions%2Fgroups');
    await until(() => page.locator('tbody tr').count(), 1);
    const row = page.locator('tbody tr').first();
    expect(await row.locator('td').nth(1).textContent()).toBe('root');
    expect(await row.locator('td').nth(2).textContent()).toBe('PUT');
    await checkPage(page, '06-activity');

    // Keyset continuation: "Older" asks for the entries `after` the last one shown; the page shows what the
    // API answers for that same URL state (entries older than the cursor do not move as new ones arrive).
    await page.goto(`${suite.origin}/admin/activity?pageSize=2`);
    await until(() => page.locator('tbody tr').count(), 2);
    await page.getByRole('button', { name: 'Older' }).click();
    await page.waitForURL(/after=\d+/);
    const after = new URL(page.url()).searchParams.get('after');
    const older = (await api.get(`/api/admin/audit/logs?pageSize=2&after=${after}`)).body.data.items as {
      path: string;
    }[];
    expect(older).toHaveLength(2);
    await until(
      () => page.locator('tbody tr td code').allTextContents(),
      (paths) => JSON.stringify(paths) === JSON.stringify(older.map((entry) => entry.path)),
    );
    await page.getByRole('button', { name: 'Newest' }).click();
    await page.waitForURL((url) => !url.searchParams.has('after'));
  });

  it('shows health and version', async () => {
    await page.getByRole('link', { name: 'Health and version' }).click();
    await page.getByRole('heading', { name: 'Health and version', level: 1 }).waitFor();
    const version = (await api.get('/api/version/')).body.data.version as string;
    await page.getByText(version, { exact: true }).waitFor();
    await checkPage(page, '07-health');
    // The console ran under its CSP without a single refusal.
    expect(refusals).toEqual([]);
  });

  it('speaks German to a German browser', async () => {
    const german = await consoleContext(suite.browser, suite.origin, 'de-DE');
    const tab = await german.context.newPage();
    await tab.goto(`${suite.origin}/admin/`);
    await tab.getByLabel('Benutzername').waitFor();
    await tab.getByRole('button', { name: 'Anmelden' }).waitFor();
    expect(await tab.evaluate(() => (globalThis as any).document.documentElement.lang)).toBe('de');
    await german.context.close();
  });
});
