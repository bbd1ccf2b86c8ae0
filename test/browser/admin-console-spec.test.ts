// SPEC-3 §6 sentence by sentence, where no other console test holds it: the refusal of a user who is not a
// superuser (told to that user only), the navigation's "Users" link with the first list, the console usable by
// keyboard (at /admin without the slash, the skip link, the focus after a search), deep links reloaded under the
// exact CSP, German texts, "the activity log with every filter of SPEC" (and SPEC-3 §4's `impersonatorId`), and
// the "Search" field of every list page matching any part of the listed names, letters outside ASCII included,
// actions done in the console recorded in the activity log with the acting superuser, and the MFA step of the
// sign-in answered by a code mailed to a real SMTP server. One app on the file database, the browser suites' own
// (test/browser/browser.ts), and for the mailed code a second app on the same database.
import type { BrowserContext, Page } from 'playwright-core';
import { startTestApp, type LoggedInClient, type TestUser } from '@svc/core/testing';
import { ADMIN_CONSOLE_CSP } from '../../packages/core/src/kernel/admin-console.js';
import { eventually, startSmtp } from '../../testing/smtp.js';
import { chromiumSuite, describeInChromium } from './browser.js';
import { consoleContext, until } from './console-helpers.js';

/** Fills `tab`'s sign-in form with `user`'s credentials and submits it, by its English or German names. */
async function submitSignIn(tab: Page, user: TestUser, language: 'en' | 'de' = 'en'): Promise<void> {
  const [name, password, button] =
    language === 'de' ? ['Benutzername', 'Passwort', 'Anmelden'] : ['Username', 'Password', 'Sign in'];
  await tab.getByLabel(name).fill(user.username);
  await tab.getByLabel(password).fill(user.password);
  await tab.getByRole('button', { name: button, exact: true }).click();
}

describeInChromium('admin console: SPEC-3 §6 in a browser', () => {
  const suite = chromiumSuite({
    cookieSessions: true,
    settings: {
      activity_log_enabled: true,
      activity_log_sync: true,
      organizations_enabled: true,
      webhooks_enabled: true,
      webhooks_allow_private_targets: true,
    },
  });
  let root: TestUser;
  let bob: TestUser;
  let api: LoggedInClient;
  let acmeId: string;

  beforeAll(async () => {
    root = await suite.app.createUser({ username: 'root', isSuperuser: true });
    const checker = await suite.app.createUser({ username: 'checker', isSuperuser: true });
    api = await suite.app.loginAs(checker);
    bob = await suite.app.createUser({ username: 'plain-bob', email: 'bob@example.com', isStaff: true });
    await suite.app.createUser({ username: 'oezge', email: 'oezge@example.com', lastName: 'Öztürk' });
    // Logged writes on paths under /permissions/ and others, and an entry of each list page.
    const made = [
      await api.post('/api/admin/permissions/permissions', { codename: 'notes.read', description: '' }),
      await api.post('/api/admin/permissions/groups', { name: 'Editors-Team', permissionIds: [] }),
      await api.post('/api/organizations', { name: 'Acme Inc', slug: 'acme-inc' }),
      await api.post('/api/organizations', { name: 'Öko Partner', slug: 'oeko-partner' }),
      await api.post('/api/admin/webhooks', {
        url: 'http://127.0.0.1:9/hook-target',
        description: 'Billing',
        events: ['*'],
      }),
    ];
    for (const answer of made) expect(answer.status).toBe(201);
    acmeId = made[2]!.body.data.id as string;
  });

  /** A new English (or `locale`) context with `user` signed in on the users list. */
  async function signedIn(user: TestUser, locale?: string): Promise<{ context: BrowserContext; page: Page }> {
    const { context } = await consoleContext(suite.browser, suite.origin, locale);
    const page = await context.newPage();
    await page.goto(`${suite.origin}/admin/`);
    await submitSignIn(page, user);
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    return { context, page };
  }

  describe('a user who is not a superuser', () => {
    it('is told so in German and not let in, and their session ends', async () => {
      const { context } = await consoleContext(suite.browser, suite.origin, 'de-DE');
      try {
        const tab = await context.newPage();
        await tab.goto(`${suite.origin}/admin/`);
        await submitSignIn(tab, bob, 'de');
        await tab.getByRole('alert').filter({ hasText: 'Nur Superuser' }).waitFor();
        expect(await tab.getByRole('navigation').count()).toBe(0);
        await until(
          async () => (await context.cookies()).filter((c) => /svc_session$/.test(c.name)).length,
          0,
        );
      } finally {
        await context.close();
      }
    });

    it('is the only one told: a superuser signing in and out afterwards in the same tab is not', async () => {
      const { context } = await consoleContext(suite.browser, suite.origin);
      try {
        const tab = await context.newPage();
        await tab.goto(`${suite.origin}/admin/`);
        await submitSignIn(tab, bob);
        await tab.getByRole('alert').filter({ hasText: 'Only superusers' }).waitFor();

        await submitSignIn(tab, root);
        await tab.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
        await tab.getByRole('button', { name: 'Sign out' }).click();
        await tab.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
        await tab.waitForLoadState('networkidle');
        expect(await tab.getByRole('alert').allTextContents()).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });

  describe('navigation and keyboard', () => {
    let context: BrowserContext;
    let page: Page;
    let refusals: string[];
    beforeAll(async () => {
      ({ context, refusals } = await consoleContext(suite.browser, suite.origin));
      page = await context.newPage();
    });
    afterAll(() => context?.close());

    it('shows the "Users" link with the users list, also while the feature read is slow', async () => {
      const { context: slow } = await consoleContext(suite.browser, suite.origin);
      try {
        const tab = await slow.newPage();
        // Every answer to /admin/features arrives 300 ms late, as on a busy server.
        await slow.route(/\/api\/admin\/features/, async (route) => {
          await new Promise((done) => setTimeout(done, 300));
          await route.continue();
        });
        await tab.goto(`${suite.origin}/admin/`);
        await submitSignIn(tab, root);
        await tab.getByRole('cell', { name: 'plain-bob', exact: true }).waitFor();
        const afterSignIn = await tab.getByRole('link', { name: 'Users', exact: true }).count();
        await tab.reload();
        await tab.getByRole('cell', { name: 'plain-bob', exact: true }).waitFor();
        const afterReload = await tab.getByRole('link', { name: 'Users', exact: true }).count();
        expect({ afterSignIn, afterReload }).toEqual({ afterSignIn: 1, afterReload: 1 });
      } finally {
        await slow.close();
      }
    });

    it('opens at /admin (no slash) and signs in by keyboard alone', async () => {
      const answer = await page.goto(`${suite.origin}/admin`);
      expect(new URL(page.url()).pathname).toBe('/admin/');
      expect(answer?.headers()['content-security-policy']).toBe(ADMIN_CONSOLE_CSP);
      expect(answer?.headers()['cache-control']).toBe('no-store');
      await page.getByLabel('Username').waitFor();
      await until(() => page.evaluate(() => (globalThis as any).document.activeElement?.name), 'username');
      await page.keyboard.type(root.username);
      await page.keyboard.press('Tab');
      await page.keyboard.type(root.password);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Users', exact: true }).waitFor();
    });

    it('keeps the focus in the search form after Enter', async () => {
      await page.goto(`${suite.origin}/admin/users`);
      const field = page.getByLabel('Search', { exact: true });
      await field.fill('bob');
      await field.press('Enter');
      await page.waitForURL(/search=bob/);
      await until(() => page.locator('tbody tr').count(), 1);
      const focused = await page.evaluate(() => {
        const active = (globalThis as any).document.activeElement;
        return active?.closest?.('form[role="search"]') ? 'search form' : String(active?.tagName);
      });
      expect(focused).toBe('search form');
    });

    it('reaches the skip link and the navigation by Tab, and follows a link with Enter', async () => {
      await page.goto(`${suite.origin}/admin/users`);
      await page.getByRole('link', { name: 'Activity log' }).waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe(
        'Skip to content',
      );
      let reached = false;
      for (let i = 0; i < 10 && !reached; i++) {
        await page.keyboard.press('Tab');
        reached =
          (await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)) ===
          'Activity log';
      }
      expect(reached).toBe(true);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Activity log', level: 1 }).waitFor();
    });

    it("reloads a user's page and a filtered activity log under the exact CSP, no-store, no refusal", async () => {
      for (const path of [`/admin/users/${bob.id}`, `/admin/activity?search=auth&method=POST`]) {
        const answer = await page.goto(`${suite.origin}${path}`);
        expect({ path, csp: answer?.headers()['content-security-policy'] }).toEqual({
          path,
          csp: ADMIN_CONSOLE_CSP,
        });
        expect(answer?.headers()['cache-control']).toBe('no-store');
      }
      await page.goto(`${suite.origin}/admin/users/${bob.id}`);
      await page.getByRole('heading', { name: 'plain-bob', level: 1 }).waitFor();
      await page.goto(`${suite.origin}/admin/activity?method=POST`);
      await until(() => page.getByLabel('Method').inputValue(), 'POST');
      expect(refusals).toEqual([]);
    });

    it('labels the list pages\' search "Suche" for a German browser', async () => {
      const german = await consoleContext(suite.browser, suite.origin, 'de-DE');
      try {
        const tab = await german.context.newPage();
        await tab.goto(`${suite.origin}/admin/`);
        await submitSignIn(tab, root, 'de');
        await tab.getByRole('heading', { name: 'Benutzer', level: 1 }).waitFor();
        await tab.getByLabel('Suche', { exact: true }).waitFor();
        await tab.getByRole('link', { name: 'Aktivitätsprotokoll' }).click();
        await tab.getByLabel('Suche', { exact: true }).waitFor();
      } finally {
        await german.context.close();
      }
    });
  });

  describe('the activity log offers every filter of SPEC', () => {
    let context: BrowserContext;
    let page: Page;
    beforeAll(async () => {
      ({ context, page } = await signedIn(root));
      await page.goto(`${suite.origin}/admin/activity`);
      await page.getByRole('heading', { name: 'Activity log', level: 1 }).waitFor();
      await until(
        () => page.locator('tbody tr').count(),
        (n) => n >= 2,
      );
    });
    afterAll(() => context?.close());

    it('labels a field for each filter, a sort and the default exclusions', async () => {
      for (const label of [
        'Search',
        'User id',
        'Impersonator id',
        'Method',
        'Status code',
        'Path contains',
        'From',
        'To',
        'Exclude paths (comma-separated)',
        'Include the paths excluded by default',
      ])
        expect({ label, count: await page.getByLabel(label, { exact: true }).count() }).toEqual({
          label,
          count: 1,
        });
      // A select's name is its label's text with the option chosen ("Sort by Newest first").
      expect(await page.getByLabel('Sort by').count()).toBe(1);
    });

    it('keeps excludePaths, the sort and impersonatorId in the URL and asks the API with them', async () => {
      const excluded = '/permissions/';
      await page.getByLabel('Exclude paths (comma-separated)').fill(excluded);
      await page.getByLabel('Sort by').selectOption({ label: 'Oldest first' });
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(
        (url) =>
          url.searchParams.get('excludePaths') === excluded &&
          url.searchParams.get('orderBy') === 'timestamp',
      );
      const expected = (
        await api.get(`/api/admin/audit/logs?excludePaths=${encodeURIComponent(excluded)}&orderBy=timestamp`)
      ).body.data.items.map((entry: { path: string }) => entry.path) as string[];
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.some((path) => path.includes(excluded))).toBe(false);
      // Oldest first: the first entries stay the same while the test's own requests are logged after them.
      await until(
        () => page.locator('tbody tr td code').allTextContents(),
        (paths) =>
          paths.length > 0 && paths[0] === expected[0] && !paths.some((path) => path.includes(excluded)),
      );
      // A reload keeps the view (the state is the URL's).
      await page.reload();
      await until(() => page.getByLabel('Exclude paths (comma-separated)').inputValue(), excluded);
      expect(await page.getByLabel('Sort by').inputValue()).toBe('timestamp');
    });

    it('shows the paths excluded by default with `excludePaths=` (SPEC: an empty value disables the default)', async () => {
      await page.goto(`${suite.origin}/admin/activity`);
      await page.getByRole('heading', { name: 'Activity log', level: 1 }).waitFor();
      await page.getByLabel('Include the paths excluded by default').check();
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL((url) => url.searchParams.get('excludePaths') === '');
      expect(await page.getByLabel('Include the paths excluded by default').isChecked()).toBe(true);
      // The default (`refresh-token`) hides nothing here; what the page asks is the API's answer to `excludePaths=`.
      const all = (await api.get('/api/admin/audit/logs?excludePaths=&pageSize=50')).body.data
        .total as number;
      await until(() => page.locator('tbody tr').count(), Math.min(all, 50));
    });

    it('filters by impersonatorId', async () => {
      await page.goto(`${suite.origin}/admin/activity?impersonatorId=${root.id}`);
      await until(() => page.getByLabel('Impersonator id').inputValue(), root.id);
      // Nobody was impersonated: the API finds nothing, and neither does the page.
      await page.getByText('Nothing found.', { exact: true }).waitFor();
      expect(await page.locator('tbody tr').count()).toBe(0);
    });
  });

  describe('"Search" matches any part of the listed names on every list page', () => {
    let context: BrowserContext;
    let page: Page;
    let refusals: string[];
    beforeAll(async () => {
      ({ context, refusals } = await consoleContext(suite.browser, suite.origin));
      page = await context.newPage();
      await page.goto(`${suite.origin}/admin/`);
      await submitSignIn(page, root);
      await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    });
    afterAll(() => context?.close());

    /** Opens the list at `/admin/{path}`, once its heading `heading` shows. */
    async function open(path: string, heading: string): Promise<void> {
      await page.goto(`${suite.origin}/admin/${path}`);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
    }

    /**
     * Types each text into the field labelled exactly "Search", submits it with Enter, and waits until the rows'
     * first cells are its names.
     */
    async function searchFinds(searches: [text: string, names: string[]][]): Promise<void> {
      for (const [text, names] of searches) {
        const field = page.getByLabel('Search', { exact: true });
        await field.fill(text);
        await field.press('Enter');
        await page.waitForURL((url) => url.searchParams.get('search') === text);
        await until(
          () => page.locator('tbody tr td:first-child').allTextContents(),
          (cells) => JSON.stringify(cells) === JSON.stringify(names),
        );
      }
    }

    it('users: a middle part in another case, and letters outside ASCII ("Öz" of "Öztürk")', async () => {
      await open('users', 'Users');
      await searchFinds([
        ['LAIN-B', ['plain-bob']],
        ['n-', ['plain-bob']],
        ['Özt', ['oezge']],
        ['Öz', ['oezge']],
      ]);
    });

    it('groups and permissions: a middle part in another case', async () => {
      await open('groups', 'Groups and permissions');
      // Two tables on the page: each search leaves its match in one of them.
      for (const [text, name] of [
        ['TORS-t', 'Editors-Team'],
        ['ES.RE', 'notes.read'],
      ] as const) {
        const field = page.getByLabel('Search', { exact: true });
        await field.fill(text);
        await field.press('Enter');
        await until(() => page.getByRole('cell', { name, exact: true }).count(), 1);
      }
    });

    it('organizations: a middle part in another case, and a name starting with "Ö"', async () => {
      await open('organizations', 'Organizations');
      await searchFinds([
        ['ME I', ['Acme Inc']],
        ['Öko', ['Öko Partner']],
        ['öKO', ['Öko Partner']],
      ]);
    });

    it("an organization's members, webhooks and the activity log: a middle part", async () => {
      await open(`organizations/${acmeId}`, 'Acme Inc');
      await searchFinds([['HECK', ['checker']]]);
      await open('webhooks', 'Webhooks');
      await searchFinds([['OOK-TARG', ['http://127.0.0.1:9/hook-target']]]);
      await open('activity', 'Activity log');
      const field = page.getByLabel('Search', { exact: true });
      await field.fill('HECKE');
      await field.press('Enter');
      await until(
        () => page.locator('tbody tr td:nth-child(2)').allTextContents(),
        (users) => users.length > 0 && users.every((user) => user === 'checker'),
      );
      expect(refusals).toEqual([]);
    });
  });

  // The API answers every group at once (SPEC "Permission management"); the page shows them 25 at a time (each
  // row holds a choice of the permissions it lacks), the page and its size in the URL like the other lists.
  it('shows the groups a page at a time, the page in the URL, and a search from the first page', async () => {
    for (let i = 0; i < 30; i++) {
      const made = await api.post('/api/admin/permissions/groups', {
        name: `paged-${String(i).padStart(2, '0')}`,
        permissionIds: [],
      });
      expect(made.status).toBe(201);
    }
    const all = ((await api.get('/api/admin/permissions/groups')).body.data as { name: string }[]).map(
      (group) => group.name,
    );
    expect(all.length).toBeGreaterThan(30);
    const { context, page } = await signedIn(root);
    try {
      await page.goto(`${suite.origin}/admin/groups`);
      await page.getByRole('heading', { name: 'Groups and permissions', level: 1 }).waitFor();
      // The groups table is the first one; each of its rows has a Grant form.
      const names = () => page.locator('table').first().locator('tbody tr td:first-child').allTextContents();
      await until(names, (shown) => JSON.stringify(shown) === JSON.stringify(all.slice(0, 25)));
      await page.getByText(`Page 1 of 2 (${all.length} in all)`).waitFor();
      await page.getByRole('button', { name: 'Next' }).click();
      await page.waitForURL((url) => url.searchParams.get('page') === '2');
      await until(names, (shown) => JSON.stringify(shown) === JSON.stringify(all.slice(25)));
      // A reload keeps the page.
      await page.reload();
      await until(names, (shown) => JSON.stringify(shown) === JSON.stringify(all.slice(25)));
      // A search starts from the first page; ten groups fit on it, with no pager.
      const field = page.getByLabel('Search', { exact: true });
      await field.fill('paged-2');
      await field.press('Enter');
      await page.waitForURL(
        (url) => url.searchParams.get('search') === 'paged-2' && !url.searchParams.has('page'),
      );
      await until(
        names,
        (shown) => JSON.stringify(shown) === JSON.stringify(all.filter((n) => n.includes('paged-2'))),
      );
      expect(await page.getByRole('button', { name: 'Next' }).count()).toBe(0);
      // 50 a page: every group on one page.
      await field.fill('');
      await field.press('Enter');
      await page.getByLabel('Per page').selectOption('50');
      await page.waitForURL((url) => url.searchParams.get('pageSize') === '50');
      await until(names, (shown) => JSON.stringify(shown) === JSON.stringify(all));
    } finally {
      await context.close();
    }
  });

  describe('sign-in with the MFA step, and every action recorded with the acting superuser', () => {
    it('every action is recorded in the activity log with the acting superuser', async () => {
      // SPEC-3 §6: "Every action goes through the public API of these specs and so is recorded in the activity
      // log with the acting superuser." Four writes through the UI: a permission and a group created, the
      // permission granted to the group, and a user's flag changed.
      const fay = await suite.app.createUser({ username: 'fay-flags', email: 'fay@example.com' });
      const since = new Date().toISOString();
      const { context, page } = await signedIn(root);
      try {
        await page.getByRole('link', { name: 'Groups and permissions' }).click();
        await page.getByRole('heading', { name: 'Groups and permissions', level: 1 }).waitFor();
        const newPermission = page.getByRole('region', { name: 'Create permission' });
        await newPermission.getByLabel('Codename').fill('audit.check');
        await newPermission.getByRole('button', { name: 'Create permission' }).click();
        await newPermission.getByText('Created audit.check.').waitFor();
        const newGroup = page.getByRole('region', { name: 'Create group' });
        await newGroup.getByLabel('Name').fill('Auditors-Crew');
        await newGroup.getByRole('button', { name: 'Create group' }).click();
        await newGroup.getByText('Created Auditors-Crew.').waitFor();
        const grant = page.getByRole('form', { name: 'Grant a permission to Auditors-Crew' });
        await grant.getByLabel('Permission').selectOption({ label: 'audit.check' });
        await grant.getByRole('button', { name: 'Grant' }).click();
        await grant.getByText('Granted audit.check to Auditors-Crew.').waitFor();

        await page.goto(`${suite.origin}/admin/users/${fay.id}`);
        await page.getByRole('heading', { name: 'fay-flags', level: 1 }).waitFor();
        await page.getByLabel('Staff', { exact: true }).check();
        await page.getByRole('button', { name: 'Save', exact: true }).click();
        await page.getByText('Saved.', { exact: true }).waitFor();
      } finally {
        await context.close();
      }

      // The writes took effect through the API...
      const groups = (await api.get('/api/admin/permissions/groups')).body.data as {
        id: number;
        name: string;
        permissions: { codename: string }[];
      }[];
      const group = groups.find((candidate) => candidate.name === 'Auditors-Crew');
      expect(group?.permissions.map((permission) => permission.codename)).toEqual(['audit.check']);
      expect((await api.get(`/api/admin/user/${fay.id}`)).body.data.isStaff).toBe(true);

      // ...and each is in the activity log (synchronous here) under root, none under anyone else or nobody.
      const entries = (
        await api.get(
          `/api/admin/audit/logs?dateFrom=${encodeURIComponent(since)}&pathContains=${encodeURIComponent('/api/admin/')}&orderBy=timestamp&pageSize=200`,
        )
      ).body.data.items as {
        method: string;
        path: string;
        statusCode: number;
        userId: string | null;
        username: string | null;
      }[];
      const writes = entries
        .filter((entry) => entry.method !== 'GET')
        .map(({ method, path, statusCode, userId, username }) => ({
          method,
          path,
          statusCode,
          userId,
          username,
        }));
      const byRoot = { userId: root.id, username: 'root' };
      expect(writes).toEqual([
        { method: 'POST', path: '/api/admin/permissions/permissions', statusCode: 201, ...byRoot },
        { method: 'POST', path: '/api/admin/permissions/groups', statusCode: 201, ...byRoot },
        { method: 'PUT', path: `/api/admin/permissions/groups/${group!.id}`, statusCode: 200, ...byRoot },
        { method: 'PATCH', path: `/api/admin/user/${fay.id}`, statusCode: 200, ...byRoot },
      ]);
    });

    it('signs in with the MFA step by an emailed code', async () => {
      // SPEC-3 §6: "Sign-in by password, with the MFA step": here the second factor is a code mailed to the
      // superuser's address. The suite's app has no MFA and no mail, so a second app on the same database
      // sends its mail to a real SMTP server on loopback.
      const smtp = await startSmtp();
      const app = await startTestApp({
        database: suite.database,
        settings: { mfa_enabled: true, smtp_url: smtp.url, mail_from: 'svc@example.com' },
      });
      const { context } = await consoleContext(suite.browser, app.url);
      try {
        const mia = await app.createUser({
          username: 'mia.mfa',
          email: 'mia@example.com',
          isSuperuser: true,
        });
        /** The six-digit code of the first mail to mia after the `before`th message. */
        const mailedCode = async (before: number): Promise<string> => {
          await eventually(() => smtp.messages.slice(before).some((m) => m.envelopeTo.includes(mia.email!)));
          const mail = smtp.messages.slice(before).find((m) => m.envelopeTo.includes(mia.email!))!;
          const code = /\b(\d{6})\b/.exec(mail.text ?? '')?.[1];
          expect(code).toMatch(/^\d{6}$/);
          return code!;
        };
        // Email MFA enrolled through the API: the setup mails a code, the confirmation makes it active.
        const client = await app.loginAs(mia);
        let before = smtp.messages.length;
        expect((await client.post('/api/mfa/email/setup')).status).toBe(200);
        const setupCode = await mailedCode(before);
        expect((await client.post('/api/mfa/email/confirm', { code: setupCode })).status).toBe(200);
        expect((await client.get('/api/mfa/status')).body.data).toMatchObject({
          enabled: true,
          method: 'email',
        });

        const tab = await context.newPage();
        await tab.goto(`${app.url}/admin/`);
        before = smtp.messages.length;
        await submitSignIn(tab, mia);
        // The password alone does not let in: the console asks for the code, and the code is mailed.
        await tab.getByLabel('Code', { exact: true }).waitFor();
        expect(await tab.getByRole('heading', { name: 'Users', level: 1 }).count()).toBe(0);
        const code = await mailedCode(before);
        await tab.getByLabel('Code', { exact: true }).fill(code);
        await tab.getByRole('button', { name: 'Verify' }).click();
        await tab.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
        await tab.getByRole('cell', { name: 'plain-bob', exact: true }).waitFor();
        await tab.getByRole('link', { name: 'Users', exact: true }).waitFor();
      } finally {
        await context.close();
        await app.close();
        await smtp.close();
      }
    });
  });
});
