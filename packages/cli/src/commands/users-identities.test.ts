import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachDatabase, startTestApp, TEST_SECRET_KEY, type TestApp } from '@svc/core/testing';
import type { SocialLoginTables } from '@svc/core/internal';
import { runCli, type CliResult } from '../../../../testing/cli-process.js';

const CLI_TIMEOUT_MS = 120_000;

/** SPEC-3 section 1: `svc users identities <username> [--unlink ID]` on a server's database. */
describeEachDatabase('svc users identities', (database) => {
  let dir: string;
  let app: TestApp;
  const users = (args: string[]): Promise<CliResult> => runCli(['--base-dir', dir, 'users', ...args]);

  beforeAll(async () => {
    app = await startTestApp({ database });
    dir = mkdtempSync(join(tmpdir(), 'svc-cli-identities-'));
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

  /** Links an identity in the table, as a callback would. */
  async function link(userId: string, provider: string, subject: string): Promise<string> {
    const rt = app.app.runtime;
    const { userIdentity } = rt.tables['social-login'] as unknown as SocialLoginTables;
    const id = randomUUID();
    await rt.authDb.orm.insert(userIdentity).values({
      id,
      userId,
      provider,
      issuer: `https://${provider}.example`,
      subject,
      email: `${subject}@example.com`,
      createdAt: new Date(),
      lastUsedAt: null,
    });
    return id;
  }

  it(
    'lists the identities, unlinks one, and keeps the last way to log in',
    async () => {
      const user = await app.createUser({ username: 'ida' });
      const google = await link(user.id, 'google', 'ida-g');
      await link(user.id, 'github', 'ida-h');
      const listed = await users(['identities', 'ida']);
      expect(listed.code).toBe(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^ID\s+PROVIDER\s+EMAIL\s+LINKED\s+LAST USED$/);
      expect(lines).toHaveLength(4);
      expect(listed.stdout).toContain('ida-g@example.com');

      const unlinked = await users(['identities', 'ida', '--unlink', google]);
      expect(unlinked.code).toBe(0);
      expect(unlinked.stdout).toContain(`unlinked identity ${google} (google) of 'ida'`);

      const unknown = await users(['identities', 'ida', '--unlink', google]);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain(`'ida' has no identity '${google}'`);

      // An account made by a social login has no password: its only identity stays.
      const rt = app.app.runtime;
      const [social] = await rt.authDb.orm
        .insert(rt.tables.core.user)
        .values({ username: 'solo', email: 'solo@example.com', passwordHash: '!social' })
        .returning();
      const only = await link(social!.id, 'google', 'solo-g');
      const refused = await users(['identities', 'solo', '--unlink', only]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('the last way');
    },
    CLI_TIMEOUT_MS,
  );
});
