import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachDatabase, startTestApp, TEST_SECRET_KEY, type TestApp } from '@svc/core/testing';
import { runCli, type CliResult } from '../../../../testing/cli-process.js';

const CLI_TIMEOUT_MS = 120_000;

/** SPEC-2 "Administration and self-service", CLI paragraph: `svc users sessions` on a server's database. */
describeEachDatabase('svc users sessions', (database) => {
  let dir: string;
  let app: TestApp;
  const users = (args: string[], input = ''): Promise<CliResult> =>
    runCli(['--base-dir', dir, 'users', ...args], { input });

  beforeAll(async () => {
    app = await startTestApp({ database, settings: { personal_tokens_enabled: true } });
    dir = mkdtempSync(join(tmpdir(), 'svc-cli-sessions-'));
    writeFileSync(
      join(dir, '.env'),
      [
        `SVC_SECRET_KEY=${TEST_SECRET_KEY}`,
        `SVC_AUTH_DATABASE_URL=${database.url}`,
        'SVC_LOG_LEVEL=ERROR',
        '',
      ].join('\n'),
    );
  }, CLI_TIMEOUT_MS);
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'lists the active sessions, asks before ending them all, and --yes ends them at once',
    async () => {
      const user = await app.createUser({ username: 'otto' });
      const phone = await app.loginAs(user);
      const laptop = await app.loginAs(user);
      const listed = await users(['sessions', 'otto']);
      expect(listed.code).toBe(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^ID\s+CREATED\s+LAST USED\s+IP\s+USER AGENT$/);
      expect(lines).toHaveLength(4); // header, rule, two sessions
      expect(listed.stdout).toContain('127.0.0.1');

      const declined = await users(['sessions', 'otto', '--revoke-all'], 'n\n');
      expect(declined.code).toBe(1);
      expect(declined.stdout + declined.stderr).toContain("End all 2 session(s) of user 'otto'? [y/N]");
      expect(declined.stderr).toContain(
        'svc: no session ended: not confirmed (use --yes to skip the question)',
      );
      expect((await phone.get('/api/auth/user')).status).toBe(200);

      const done = await users(['sessions', 'otto', '--revoke-all', '--yes']);
      expect(done.code).toBe(0);
      expect(done.stdout).toBe("ended 2 session(s) of 'otto'\n");
      for (const client of [phone, laptop]) {
        const res = await client.get('/api/auth/user');
        expect(res.status).toBe(401);
        expect(res.body.detail[0].code).toBe('auth.session_revoked');
      }
      const refresh = await app.post('/api/auth/refresh-token', { refresh_token: laptop.refreshToken });
      expect(refresh.body.detail[0].code).toBe('auth.refresh_token_revoked');
      expect((await users(['sessions', 'otto'])).stdout).toBe("'otto' has no active sessions\n");
      const unknown = await users(['sessions', 'nobody']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain("svc: user 'nobody' does not exist");
    },
    CLI_TIMEOUT_MS,
  );

  it(
    '--include-tokens also deletes the personal access tokens (SPEC-3 §7 rule 2); without it they stay',
    async () => {
      const user = await app.createUser({ username: 'petra' });
      const session = await app.loginAs(user);
      const created = await session.post('/api/auth/tokens', { name: 'ci' });
      expect(created.status).toBe(201);
      const pat = app.as(created.body.data.token);

      const plain = await users(['sessions', 'petra', '--revoke-all', '--yes']);
      expect(plain.code).toBe(0);
      expect(plain.stdout).toBe("ended 1 session(s) of 'petra'\n");
      expect((await pat.get('/api/auth/user')).status).toBe(200);

      const alone = await users(['sessions', 'petra', '--include-tokens', '--yes']);
      expect(alone.code).toBe(1);
      expect(alone.stderr).toContain('svc: --include-tokens needs --revoke-all');
      expect((await pat.get('/api/auth/user')).status).toBe(200);

      const all = await users(['sessions', 'petra', '--revoke-all', '--include-tokens', '--yes']);
      expect(all.code).toBe(0);
      expect(all.stdout).toBe(
        "ended 0 session(s) of 'petra'\ndeleted 1 personal access token(s) of 'petra'\n",
      );
      const refused = await pat.get('/api/auth/user');
      expect(refused.status).toBe(401);
      expect(refused.body.detail[0].code).toBe('auth.token_invalid');
    },
    CLI_TIMEOUT_MS,
  );
});
