// One user's page of the admin console and the invitation on the users list, in Chromium (SPEC-3 §6,
// docs/admin-console.md): each action done through the UI (by the confirmation dialog where it destroys
// something) and checked through the API; axe-core on each section as it is (dialog open included: no serious or
// critical violation); the sections of switched-off features left out, not broken. Screenshots are written to
// test-artifacts/admin-console-user/ (git-ignored).
import type { BrowserContext, Page } from 'playwright-core';
import type { LoggedInClient, TestUser } from '@svc/core/testing';
import { enrolTotp } from '../../testing/mfa.js';
import {
  PASSKEY_TEST_ORIGIN,
  PASSKEY_TEST_SETTINGS,
  registerPasskey,
  SoftAuthenticator,
} from '../../testing/webauthn.js';
import { eventually, startSmtp, type TestSmtp } from '../../testing/smtp.js';
import { chromiumSuite, describeInChromium, type ChromiumSuiteOptions } from './browser.js';
import { artifactsDir, checkPage, consoleContext, until } from './console-helpers.js';

const ARTIFACTS = artifactsDir('admin-console-user');

/** Signs `user` in on a new page of `context` (no MFA on the account) and waits for the users list. */
async function signIn(context: BrowserContext, origin: string, user: TestUser): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${origin}/admin/`);
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
  return page;
}

describeInChromium("admin console: one user's page (SPEC-3 §6) in Chromium", () => {
  // The SMTP server starts first; the suite's app reads these settings when it starts (after this beforeAll).
  const settings: NonNullable<ChromiumSuiteOptions['settings']> = {
    mfa_enabled: true,
    activity_log_enabled: true,
    activity_log_sync: true,
    personal_tokens_enabled: true,
    impersonation_enabled: true,
    organizations_enabled: true,
    ...PASSKEY_TEST_SETTINGS,
  };
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startSmtp();
    settings.smtp_url = smtp.url;
  });
  afterAll(async () => {
    await smtp?.close();
  });
  const suite = chromiumSuite({ cookieSessions: true, settings });
  let admin: TestUser;
  let api: LoggedInClient;
  let dave: TestUser;
  let daveApi: LoggedInClient;
  let context: BrowserContext;
  let page: Page;
  let refusals: string[];
  let acmeId: string;

  beforeAll(async () => {
    admin = await suite.app.createUser({ username: 'root', isSuperuser: true });
    // A second superuser checks through the API what the console did.
    api = await suite.app.loginAs(await suite.app.createUser({ username: 'checker', isSuperuser: true }));
    dave = await suite.app.createUser({ username: 'dave', email: 'dave@example.com' });
    // Dave's first session makes a personal token; enrolling TOTP logs him in a second time.
    daveApi = await suite.app.loginAs(dave);
    const token = await daveApi.post('/api/auth/tokens', { name: 'ci-token', expiresInDays: 30 });
    expect(token.status).toBe(201);
    // Two passkeys (the software authenticator of the passkey tests) and an organization of his own.
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    expect((await registerPasskey(daveApi, device, { name: 'Laptop' })).status).toBe(201);
    expect((await registerPasskey(daveApi, device, { name: 'Phone' })).status).toBe(201);
    const acme = await daveApi.post('/api/organizations', { name: 'Acme', slug: 'acme' });
    expect(acme.status).toBe(201);
    acmeId = acme.body.data.id;
    await enrolTotp(suite.app, dave);
    expect((await api.post('/api/admin/permissions/permissions', { codename: 'notes.read' })).status).toBe(
      201,
    );
    expect((await api.post('/api/admin/permissions/groups', { name: 'editors' })).status).toBe(201);
    ({ context, refusals } = await consoleContext(suite.browser, suite.origin));
    page = await signIn(context, suite.origin, admin);
  });
  afterAll(async () => {
    await context?.close();
  });

  const daveUrl = () => `${suite.origin}/admin/users/${dave.id}`;
  const section = (name: string) => page.getByRole('region', { name, exact: true });

  it('invites a user from the users list (the mail is sent), then changes their flags on their page', async () => {
    await checkPage(page, ARTIFACTS, '01-users-with-invite');
    const invite = page.getByRole('region', { name: 'Invite user' });
    await invite.getByLabel('Email').fill('erin@example.com');
    await invite.getByLabel('Username').fill('erin');
    await invite.getByLabel('First name').fill('Erin');
    await invite.getByRole('button', { name: 'Send invitation' }).click();
    await invite.getByRole('status').filter({ hasText: 'Invitation sent to erin@example.com.' }).waitFor();
    const listed = (await api.get('/api/admin/user/?search=erin')).body.data.items;
    expect(listed).toEqual([
      expect.objectContaining({
        username: 'erin',
        email: 'erin@example.com',
        firstName: 'Erin',
        emailVerifiedAt: null,
      }),
    ]);
    await eventually(() => smtp.messages.some((message) => message.envelopeTo.includes('erin@example.com')));

    // The same address again is a new link for the pending invitation; a taken username is the API's refusal.
    await invite.getByLabel('Email').fill('other@example.com');
    await invite.getByLabel('Username').fill('dave');
    await invite.getByRole('button', { name: 'Send invitation' }).click();
    await invite.getByRole('alert').waitFor();
    expect((await invite.getByRole('alert').textContent())!.length).toBeGreaterThan(0);

    // The list (now showing erin) leads to her page, where the flags are changed.
    await page.getByRole('link', { name: 'erin' }).click();
    await page.getByRole('heading', { name: 'erin', level: 1 }).waitFor();
    await page.getByRole('checkbox', { name: 'Staff' }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await api.get(`/api/admin/user/${listed[0].id}`)).body.data).toMatchObject({
      isStaff: true,
      isActive: true,
      isSuperuser: false,
    });
  });

  it('shows every section of a user with all features on, each keyboard-reachable and named', async () => {
    await page.goto(daveUrl());
    await page.getByRole('heading', { name: 'dave', level: 1 }).waitFor();
    for (const heading of [
      'Profile',
      'Password',
      'Multi-factor authentication',
      'Sessions',
      'Personal tokens',
      'Passkeys',
      'Organizations',
      'Groups',
      'Direct permissions',
      'Effective permissions',
      'Recent activity',
      'Impersonation',
      'Deactivate or delete',
    ])
      await page.getByRole('heading', { name: heading, exact: true, level: 2 }).waitFor();
    await until(() => section('Sessions').locator('tbody tr').count(), 2);
    await section('Personal tokens').getByRole('cell', { name: 'ci-token', exact: true }).waitFor();
    // Dave's own requests are his recent activity; the link opens the activity log with the filter in its URL.
    await section('Recent activity').getByRole('cell', { name: '/auth/tokens' }).first().waitFor();
    await checkPage(page, ARTIFACTS, '02-user');
    // The local navigation is made of real links to each section.
    await page
      .getByRole('navigation', { name: 'On this page' })
      .getByRole('link', { name: 'Impersonation' })
      .waitFor();
    // No identities section: no social login provider is configured, so its route is not mounted.
    expect(await page.getByRole('heading', { name: 'Linked identities' }).count()).toBe(0);
  });

  it('revokes one session after the confirmation, checked through the API', async () => {
    const before = (await api.get(`/api/admin/user/${dave.id}/sessions`)).body.data as { id: string }[];
    expect(before).toHaveLength(2);
    await section('Sessions')
      .getByRole('button', { name: /^Revoke the session started/ })
      .first()
      .click();
    const dialog = page.getByRole('alertdialog', { name: 'Please confirm' });
    await dialog.waitFor();
    // "Cancel" has the focus: Enter alone destroys nothing.
    expect(
      await dialog
        .getByRole('button', { name: 'Cancel' })
        .evaluate((b) => b === (globalThis as any).document.activeElement),
    ).toBe(true);
    await checkPage(page, ARTIFACTS, '03-confirm-revoke-session');
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Session revoked.' }).waitFor();
    await until(
      async () => ((await api.get(`/api/admin/user/${dave.id}/sessions`)).body.data as unknown[]).length,
      1,
    );
    await until(() => section('Sessions').locator('tbody tr').count(), 1);
  });

  it('revokes a personal token (not on Cancel or Escape), checked through the API', async () => {
    const revoke = section('Personal tokens').getByRole('button', { name: 'Revoke token ci-token' });
    await revoke.click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
    await until(() => page.getByRole('alertdialog').count(), 0);
    await revoke.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('alertdialog').waitFor();
    await page.keyboard.press('Escape');
    await until(() => page.getByRole('alertdialog').count(), 0);
    // The focus is back on the button that opened the dialog.
    expect(await revoke.evaluate((b) => b === (globalThis as any).document.activeElement)).toBe(true);
    expect((await api.get(`/api/admin/user/${dave.id}/tokens`)).body.data).toHaveLength(1);

    await revoke.click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Token ci-token revoked.' }).waitFor();
    expect((await api.get(`/api/admin/user/${dave.id}/tokens`)).body.data).toEqual([]);
  });

  it("deletes a user's passkey after the confirmation and lists their organizations, checked through the API", async () => {
    const passkeys = section('Passkeys');
    await passkeys.getByRole('cell', { name: 'Laptop', exact: true }).waitFor();
    await passkeys.getByRole('cell', { name: 'Phone', exact: true }).waitFor();
    const organizations = section('Organizations');
    await organizations.getByRole('cell', { name: 'owner', exact: true }).waitFor();
    await checkPage(page, ARTIFACTS, '03b-user-passkeys-organizations');

    await passkeys.getByRole('button', { name: 'Delete the passkey Laptop' }).click();
    const dialog = page.getByRole('alertdialog');
    await dialog.getByText('Delete the passkey Laptop of dave?', { exact: false }).waitFor();
    await checkPage(page, ARTIFACTS, '03c-confirm-delete-passkey');
    // Nothing is deleted before the confirmation.
    expect((await api.get(`/api/admin/user/${dave.id}/passkeys`)).body.data).toHaveLength(2);
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await passkeys.getByRole('status').filter({ hasText: 'Passkey Laptop deleted.' }).waitFor();
    const left = (await api.get(`/api/admin/user/${dave.id}/passkeys`)).body.data as { name: string }[];
    expect(left.map((passkey) => passkey.name)).toEqual(['Phone']);
    expect((await daveApi.get('/api/auth/passkeys')).body.data).toHaveLength(1);
    await until(() => passkeys.locator('tbody tr').count(), 1);
    // The delete is in the activity log with the superuser who made it.
    const entries = (await api.get('/api/admin/audit/activity?pathContains=/passkeys/&method=DELETE')).body
      .data as { username: string; statusCode: number }[];
    expect(entries.map((entry) => [entry.username, entry.statusCode])).toEqual([['root', 204]]);

    // The organization links to its page.
    await organizations.getByRole('link', { name: 'Acme' }).click();
    await page.getByRole('heading', { name: 'Acme', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/admin/organizations/${acmeId}`);
    await page.goto(daveUrl());
    await page.getByRole('heading', { name: 'dave', level: 1 }).waitFor();
  });

  it('opens a user page without writing to the activity log (GET /admin/features, no probing writes)', async () => {
    const total = async () =>
      (await api.get('/api/admin/audit/logs?excludePaths=&pageSize=1')).body.data.total as number;
    const before = await total();
    // A fresh load of the console on the page: sign-in state, the features read, every section's reads.
    await page.goto(daveUrl());
    await page.getByRole('heading', { name: 'Impersonation', exact: true, level: 2 }).waitFor();
    await section('Passkeys').getByRole('cell', { name: 'Phone', exact: true }).waitFor();
    await section('Recent activity').locator('tbody tr').first().waitFor();
    expect(await total()).toBe(before);
  });

  it("resets the user's MFA after the confirmation: the password alone signs him in again", async () => {
    // Before: the password asks for the second step.
    const before = await suite.app.post('/api/auth/token', undefined, {
      form: { username: 'dave', password: dave.password },
    });
    expect(before.body.mfa_required ?? before.body.data?.mfa_required).toBe(true);
    await section('Multi-factor authentication').getByRole('button', { name: 'Reset MFA' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Reset MFA' }).click();
    await page.getByRole('status').filter({ hasText: 'MFA reset.' }).waitFor();
    // loginAs throws on an MFA step.
    const fresh = await suite.app.loginAs(dave);
    expect((await fresh.get('/api/mfa/status')).body.data).toEqual({ enabled: false, method: null });
  });

  it('grants a direct permission and adds the user to a group, checked through the API', async () => {
    const grant = page.getByRole('form', { name: 'Grant permission' });
    await grant.getByLabel('Permission').selectOption({ label: 'notes.read' });
    await grant.getByRole('button', { name: 'Grant permission' }).click();
    await page.getByRole('status').filter({ hasText: 'Granted notes.read.' }).waitFor();
    const direct = (await api.get(`/api/admin/permissions/users/${dave.id}/permissions`)).body.data as {
      codename: string;
    }[];
    expect(direct.map((permission) => permission.codename)).toEqual(['notes.read']);
    // The effective permissions are read again.
    await section('Groups').getByText('notes.read', { exact: true }).last().waitFor();

    const add = page.getByRole('form', { name: 'Add to group' });
    await add.getByLabel('Group').selectOption({ label: 'editors' });
    await add.getByRole('button', { name: 'Add to group' }).click();
    await page.getByRole('status').filter({ hasText: 'Added to editors.' }).waitFor();
    const groups = (await api.get(`/api/admin/permissions/users/${dave.id}/groups`)).body.data as {
      name: string;
    }[];
    expect(groups.map((group) => group.name)).toEqual(['editors']);
    await section('Groups').getByRole('button', { name: 'Remove from group editors' }).waitFor();
    await checkPage(page, ARTIFACTS, '04-user-permissions');
  });

  it("sets the user's password: the API's refusal shown, then the new one signs him in", async () => {
    const form = section('Password');
    await form.getByLabel('New password').fill('short');
    await form.getByRole('button', { name: 'Set password' }).click();
    await form.getByRole('alert').waitFor();
    expect(await form.getByRole('alert').textContent()).toMatch(/at least \d+ characters/);

    await form.getByLabel('New password').fill('daves-new-long-password');
    await form.getByRole('button', { name: 'Set password' }).click();
    await form.getByRole('status').filter({ hasText: 'Password set.' }).waitFor();
    await suite.app.loginAs({ username: 'dave', password: 'daves-new-long-password' });
    const old = await suite.app.post('/api/auth/token', undefined, {
      form: { username: 'dave', password: dave.password },
    });
    expect(old.status).toBe(401);
    dave = { ...dave, password: 'daves-new-long-password' };
  });

  it('impersonates the user with a reason: the session and the activity entry checked through the API', async () => {
    const form = section('Impersonation');
    await form.getByLabel('Reason').fill('support ticket 4711');
    await form.getByRole('button', { name: 'Impersonate' }).click();
    await form
      .getByRole('status')
      .filter({ hasText: 'Impersonation of dave started, valid 15 minutes.' })
      .waitFor();
    // The token is never put on the page; only a button offers it to the clipboard.
    await form.getByRole('button', { name: 'Copy the access token' }).waitFor();
    expect(await page.content()).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);

    const sessions = (await api.get(`/api/admin/user/${dave.id}/sessions`)).body.data as {
      impersonatedBy?: { username: string };
    }[];
    expect(sessions.filter((s) => s.impersonatedBy).map((s) => s.impersonatedBy!.username)).toEqual(['root']);
    const entries = (await api.get('/api/admin/audit/activity?pathContains=/impersonate&limit=20')).body
      .data as {
      username: string;
      statusCode: number;
      description: string | null;
    }[];
    expect(entries.filter((entry) => entry.statusCode === 200)).toEqual([
      expect.objectContaining({
        username: 'root',
        description: expect.stringContaining('support ticket 4711'),
      }),
    ]);
    // The sessions list shows it with its superuser.
    await section('Sessions').getByRole('cell', { name: 'root', exact: true }).waitFor();
    await checkPage(page, ARTIFACTS, '05-user-impersonation');

    // A staff member cannot be impersonated: the API's message is shown.
    const erin = (await api.get('/api/admin/user/?search=erin')).body.data.items[0].id as string;
    await page.goto(`${suite.origin}/admin/users/${erin}`);
    await section('Impersonation').getByLabel('Reason').fill('checking');
    await section('Impersonation').getByRole('button', { name: 'Impersonate' }).click();
    await section('Impersonation').getByRole('alert').waitFor();
  });

  it('links the recent activity to the activity log filtered to the user, and shows it in German', async () => {
    await page.goto(daveUrl());
    await section('Recent activity').getByRole('link', { name: 'All activity of dave' }).click();
    await page.getByRole('heading', { name: 'Activity log', level: 1 }).waitFor();
    expect(new URL(page.url()).searchParams.get('userId')).toBe(dave.id);
    await until(() => page.getByLabel('User id').inputValue(), dave.id);
    // The console ran under its CSP without a single refusal.
    expect(refusals).toEqual([]);

    const german = await consoleContext(suite.browser, suite.origin, 'de-DE');
    const tab = await german.context.newPage();
    await tab.goto(`${suite.origin}/admin/`);
    await tab.getByLabel('Benutzername').fill('root');
    await tab.getByLabel('Passwort').fill(admin.password);
    await tab.getByRole('button', { name: 'Anmelden', exact: true }).click();
    await tab.getByRole('region', { name: 'Benutzer einladen' }).waitFor();
    await tab.goto(daveUrl());
    for (const heading of [
      'Sitzungen',
      'Persönliche Tokens',
      'Direkte Berechtigungen',
      'Identität übernehmen',
    ])
      await tab.getByRole('heading', { name: heading, exact: true, level: 2 }).waitFor();
    await checkPage(tab, ARTIFACTS, '06-user-de');
    await german.context.close();
  });
});

describeInChromium("admin console: a user's page with the optional features off (SPEC-3 §6)", () => {
  // Defaults: no personal tokens, impersonation, activity log or social login provider.
  const suite = chromiumSuite({ cookieSessions: true });

  it('leaves out the sections of switched-off features, without an error', async () => {
    const admin = await suite.app.createUser({ username: 'root', isSuperuser: true });
    const plain = await suite.app.createUser({ username: 'frank' });
    const { context } = await consoleContext(suite.browser, suite.origin);
    const page = await signIn(context, suite.origin, admin);
    await page.goto(`${suite.origin}/admin/users/${plain.id}`);
    await page.getByRole('heading', { name: 'frank', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Sessions', exact: true }).waitFor();
    await page.getByRole('heading', { name: 'Direct permissions', exact: true }).waitFor();
    for (const absent of [
      'Personal tokens',
      'Linked identities',
      'Recent activity',
      'Impersonation',
      'Passkeys',
      'Organizations',
    ])
      expect({
        absent,
        count: await page.getByRole('heading', { name: absent, exact: true }).count(),
      }).toEqual({
        absent,
        count: 0,
      });
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('checkbox', { name: 'Also delete the personal tokens' }).count()).toBe(0);
    await checkPage(page, ARTIFACTS, '07-user-features-off');
    await context.close();
  });
});
