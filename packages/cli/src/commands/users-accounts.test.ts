import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describeEachDatabase, TEST_SECRET_KEY, type TestApp } from '@svc/core/testing';
import { runCli, type CliResult } from '../../../../testing/cli-process.js';
import { configRow, dbOf, enrolTotp, passwordLogin } from '../../../../testing/mfa.js';
import { eventually, startMailApp, stopMailApp, type TestSmtp } from '../../../../testing/smtp.js';

const CLI_TIMEOUT_MS = 120_000;

/** The one-time token of the first link to app.example.com in `text`. */
function tokenIn(text: string, page: string): string {
  const match = new RegExp(`https://app\\.example\\.com/account/${page}\\?token=(\\S+)`).exec(text);
  if (!match) throw new Error(`no ${page} link in: ${text}`);
  return decodeURIComponent(match[1]!);
}

/** SPEC-2 "Administration and self-service", CLI paragraph: one project, the real `svc`, a server on its database. */
describeEachDatabase('svc users invite, reset-link, reset-mfa', (database) => {
  let dir: string;
  let app: TestApp;
  let smtp: TestSmtp;
  const users = (args: string[], input = ''): Promise<CliResult> =>
    runCli(['--base-dir', dir, 'users', ...args], { input });
  const userRow = async (username: string) => {
    const { orm, core } = dbOf(app);
    return (await orm.select().from(core.user).where(eq(core.user.username, username)))[0];
  };

  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(database, {
      public_url: 'https://app.example.com',
      mfa_enabled: true,
    }));
    dir = mkdtempSync(join(tmpdir(), 'svc-cli-accounts-'));
    writeFileSync(
      join(dir, '.env'),
      [
        `SVC_SECRET_KEY=${TEST_SECRET_KEY}`,
        `SVC_AUTH_DATABASE_URL=${database.url}`,
        `SVC_SMTP_URL=${smtp.url}`,
        'SVC_PUBLIC_URL=https://app.example.com',
        'SVC_APP_NAME=Notes',
        'SVC_LOG_LEVEL=ERROR',
        '',
      ].join('\n'),
    );
  }, CLI_TIMEOUT_MS);
  afterAll(async () => {
    await stopMailApp({ app, smtp });
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'invite --print-link prints a link the server accepts; a mailed invitation replaces it',
    async () => {
      const printed = await users([
        'invite',
        'Ann@Example.com',
        '--username',
        'ann',
        '--staff',
        '--print-link',
      ]);
      expect(printed.stderr).toBe('');
      expect(printed.code).toBe(0);
      expect(printed.stdout).toContain("invited 'ann' <Ann@Example.com>");
      const first = tokenIn(printed.stdout, 'accept-invitation');
      expect(await userRow('ann')).toMatchObject({ isStaff: true, isActive: true, emailVerifiedAt: null });
      expect(smtp.messages).toHaveLength(0);

      // The pending invitation again, mailed this time: a new link that replaces the printed one.
      const mailed = await users(['invite', 'ann@example.com']);
      expect(mailed.code).toBe(0);
      expect(mailed.stdout).toContain("sent 'ann' a new invitation; the link was mailed to Ann@Example.com");
      await eventually(() => smtp.messages.length === 1);
      expect(smtp.messages[0]!.subject).toBe('Notes invites you to Notes');
      const second = tokenIn(smtp.messages[0]!.text ?? '', 'accept-invitation');
      const password = 'ann-chooses-a-passphrase';
      expect((await app.post('/api/auth/invitation/accept', { token: first, password })).status).toBe(400);
      const accepted = await app.post('/api/auth/invitation/accept', { token: second, password });
      expect(accepted.status).toBe(200);
      expect((await passwordLogin(app, { username: 'ann', password })).status).toBe(200);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'reset-link prints a one-time link (no mail) that sets a new password without verifying the email',
    async () => {
      const user = await app.createUser({ username: 'rachel', email: 'rachel@example.com' });
      const res = await users(['reset-link', 'rachel']);
      expect(res.code).toBe(0);
      expect(res.stdout).toContain("password-reset link for 'rachel'");
      const token = tokenIn(res.stdout, 'reset-password');
      const newPassword = 'rachels-new-passphrase';
      expect((await app.post('/api/auth/password/reset', { token, newPassword })).status).toBe(204);
      expect((await app.post('/api/auth/password/reset', { token, newPassword })).status).toBe(400);
      expect((await passwordLogin(app, { username: 'rachel', password: newPassword })).status).toBe(200);
      // Nobody proved the address: the link was handed over, not mailed to it.
      expect((await userRow('rachel'))!.emailVerifiedAt).toBeNull();
      expect(smtp.messages.filter((m) => m.envelopeTo.includes(user.email!))).toHaveLength(0);

      const unknown = await users(['reset-link', 'nobody']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain("svc: user 'nobody' does not exist");
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'update --email and update --no-active end the reset links given before (SPEC-3 §7 rule 4)',
    async () => {
      await app.createUser({ username: 'ulla', email: 'ulla@example.com' });
      const link = async () => tokenIn((await users(['reset-link', 'ulla'])).stdout, 'reset-password');
      const reset = (token: string) =>
        app.post('/api/auth/password/reset', { token, newPassword: 'ullas-new-passphrase' });
      const beforeEmail = await link();
      const moved = await users(['update', 'ulla', '--email', 'ulla@elsewhere.example']);
      expect(moved.code).toBe(0);
      const refused = await reset(beforeEmail);
      expect(refused.status).toBe(400);
      expect(refused.body.detail[0]).toMatchObject({ code: 'auth.reset_token_invalid' });

      const beforePause = await link();
      expect((await users(['update', 'ulla', '--no-active'])).code).toBe(0);
      expect((await users(['update', 'ulla', '--active'])).code).toBe(0);
      expect((await reset(beforePause)).status).toBe(400);
      // A link given after the changes works.
      expect((await reset(await link())).status).toBe(204);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'reset-mfa asks first, then removes the MFA: the next login needs the password only',
    async () => {
      const user = await app.createUser({ username: 'mona' });
      await enrolTotp(app, user);
      const declined = await users(['reset-mfa', 'mona'], 'n\n');
      expect(declined.code).toBe(1);
      expect(declined.stderr).toContain('svc: MFA not reset: not confirmed (use --yes to skip the question)');
      expect(await configRow(app, user.id)).toBeDefined();

      const done = await users(['reset-mfa', 'mona', '--yes']);
      expect(done.code).toBe(0);
      expect(done.stdout).toContain("removed the MFA (totp) of 'mona'");
      expect(await configRow(app, user.id)).toBeUndefined();
      const login = await passwordLogin(app, user);
      expect(login.status).toBe(200);
      expect(login.body.access_token).toEqual(expect.any(String));
    },
    CLI_TIMEOUT_MS,
  );
});
