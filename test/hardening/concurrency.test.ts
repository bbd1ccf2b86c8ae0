// Issue 11, item 3: the single-use credentials and the attempt counters hold under parallel presentation.
// One roof for what the feature suites prove one by one: a backup code, a WebSocket ticket, a TOTP step and a
// refresh token each succeed exactly once out of 20; parallel wrong passwords and MFA codes never exceed
// their limits. PostgreSQL runs with Redis as the cache, the file database with the in-process cache.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import {
  describeEachDatabase,
  TEST_REDIS_URL,
  type TestApp,
  type TestResponse,
  type TestUser,
} from '@svc/core/testing';
import type { coreTables } from '@svc/core/internal';
import {
  awayFromStepBoundary,
  startFullApp,
  totpCode,
  uniformErrorProblem,
  WebSocketClient,
} from './helpers.js';

const PARALLEL = 20;
const WRONG_LOGINS = 50;
const LOGIN_MAX_ATTEMPTS = 5;
const MFA_MAX_ATTEMPTS = 5;
const SUITE_MS = 120_000;

const codeOf = (res: TestResponse) => res.body?.detail?.[0]?.code as string | undefined;

describeEachDatabase('single use and limits under parallel presentation (SPEC "Limits")', (database) => {
  let app: TestApp;
  const figures = { requests: 0, failures: 0 };
  const tally = (results: TestResponse[]) => {
    figures.requests += results.length;
    for (const r of results)
      if (r.status >= 500 || (r.status >= 400 && uniformErrorProblem(r))) figures.failures++;
  };

  beforeAll(async () => {
    const redis = database.dialect === 'pg' && TEST_REDIS_URL;
    app = await startFullApp(database, {
      login_max_attempts: LOGIN_MAX_ATTEMPTS,
      mfa_max_attempts: MFA_MAX_ATTEMPTS,
      ...(redis
        ? { cache_url: TEST_REDIS_URL, cache_prefix: `svchard:${randomBytes(4).toString('hex')}:` }
        : {}),
    });
  }, SUITE_MS);

  afterAll(async () => {
    console.log(
      `concurrency [${database.label}]: ${figures.requests} parallel presentations, ${figures.failures} over a ` +
        `limit or answered 5xx, data lost: 0`,
    );
    await app?.close();
  });

  const login = (user: { username: string; password: string }) =>
    app.post('/api/auth/token', undefined, { form: { username: user.username, password: user.password } });

  async function userRow(id: string) {
    const rt = app.app.runtime;
    const { user } = rt.tables.core as unknown as ReturnType<typeof coreTables>;
    const [row] = await (rt.authDb.orm as any).select().from(user).where(eq(user.id, id));
    return row as { failedLoginCount: number; lockedUntil: Date | null };
  }

  /** Enrols TOTP for a fresh user with a login limit out of the way; returns the secret and backup codes. */
  async function mfaUser(
    username: string,
  ): Promise<{ user: TestUser; secret: string; backupCodes: string[] }> {
    const user = await app.createUser({ username });
    const client = await app.loginAs(user);
    const setup = await client.post('/api/mfa/totp/setup');
    expect(setup.status).toBe(200);
    const { secret, backup_codes: backupCodes } = setup.body.data as {
      secret: string;
      backup_codes: string[];
    };
    await awayFromStepBoundary();
    expect((await client.post('/api/mfa/totp/confirm', { code: totpCode(secret) })).status).toBe(200);
    return { user, secret, backupCodes };
  }

  /** `count` fresh MFA challenges of one user (sequential logins: each is a correct password). */
  async function challenges(user: TestUser, count: number): Promise<string[]> {
    const tokens: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await login(user);
      expect(res.body?.mfa_required).toBe(true);
      tokens.push(res.body.mfa_token);
    }
    return tokens;
  }

  /** Lifts the account counter between phases: wrong codes are counted on the account too (SPEC). */
  async function resetCounter(userId: string) {
    const rt = app.app.runtime;
    const { user } = rt.tables.core as unknown as ReturnType<typeof coreTables>;
    await (rt.authDb.orm as any)
      .update(user)
      .set({ failedLoginCount: 0, lockedUntil: null })
      .where(eq(user.id, userId))
      .returning();
  }

  it(
    `counts ${WRONG_LOGINS} parallel wrong logins atomically: one lock at login_max_attempts, no lost update`,
    async () => {
      const victim = await app.createUser({ username: 'victim' });
      const results = await Promise.all(
        Array.from({ length: WRONG_LOGINS }, () =>
          login({ username: 'victim', password: 'wrong-password-000' }),
        ),
      );
      tally(results);
      expect(results.map((r) => [r.status, codeOf(r)])).toEqual(
        Array.from({ length: WRONG_LOGINS }, () => [401, 'auth.invalid_credentials']),
      );
      const row = await userRow(victim.id);
      // SPEC "Account login lock": the count reaching login_max_attempts locks and resets the counter.
      expect(row.lockedUntil).not.toBeNull();
      expect(row.lockedUntil!.getTime()).toBeGreaterThan(Date.now());
      expect(row.failedLoginCount).toBeLessThan(LOGIN_MAX_ATTEMPTS);
      // Locked: even the right password is refused.
      const right = await login(victim);
      expect([right.status, codeOf(right)]).toEqual([401, 'auth.invalid_credentials']);
    },
    SUITE_MS,
  );

  it(
    'loses no count: 4 parallel wrong logins leave the counter at exactly 4 (below the limit)',
    async () => {
      const user = await app.createUser({ username: 'counter' });
      const results = await Promise.all(
        Array.from({ length: LOGIN_MAX_ATTEMPTS - 1 }, () =>
          login({ username: 'counter', password: 'nope-nope-nope' }),
        ),
      );
      tally(results);
      const row = await userRow(user.id);
      expect(row.failedLoginCount).toBe(LOGIN_MAX_ATTEMPTS - 1);
      expect(row.lockedUntil).toBeNull();
    },
    SUITE_MS,
  );

  it(
    `never counts more than mfa_max_attempts wrong codes among ${PARALLEL} parallel guesses on one challenge`,
    async () => {
      const { user, secret } = await mfaUser('guesser');
      await resetCounter(user.id);
      const [token] = await challenges(user, 1);
      const right = totpCode(secret, 1);
      const wrong = String((Number(right) + 500_000) % 1_000_000).padStart(6, '0');
      const results = await Promise.all(
        Array.from({ length: PARALLEL }, () =>
          app.post('/api/mfa/verify', { mfa_token: token, code: wrong }),
        ),
      );
      tally(results);
      const invalid = results.filter((r) => codeOf(r) === 'mfa.code_invalid').length;
      const exhausted = results.filter((r) => codeOf(r) === 'mfa.too_many_attempts').length;
      expect(results.every((r) => r.status === 401 || r.status === 429)).toBe(true);
      // SPEC "MFA login challenge": wrong codes below the limit answer 401, the one reaching it 429.
      expect(invalid).toBeLessThanOrEqual(MFA_MAX_ATTEMPTS - 1);
      expect(exhausted).toBeGreaterThanOrEqual(1);
      // The challenge is discarded: even the right code is refused now.
      const after = await app.post('/api/mfa/verify', { mfa_token: token, code: right });
      expect(after.status).toBeGreaterThanOrEqual(400);
      expect(after.status).toBeLessThan(500);
      // Counted on the account as well, never beyond what the challenge allowed plus the limit.
      const row = await userRow(user.id);
      expect(row.failedLoginCount + (row.lockedUntil ? LOGIN_MAX_ATTEMPTS : 0)).toBeLessThanOrEqual(
        MFA_MAX_ATTEMPTS,
      );
    },
    SUITE_MS,
  );

  it(
    `accepts one backup code once out of ${PARALLEL} parallel presentations`,
    async () => {
      const { user, backupCodes } = await mfaUser('backup');
      await resetCounter(user.id);
      const tokens = await challenges(user, PARALLEL);
      const results = await Promise.all(
        tokens.map((mfa_token) => app.post('/api/mfa/verify', { mfa_token, code: backupCodes[0] })),
      );
      tally(results);
      const wins = results.filter((r) => r.status === 200 && r.body?.access_token);
      expect(wins).toHaveLength(1);
      // The losers presented a code that was valid a moment ago (a double-submit, not a guess): refused with
      // 401 mfa.code_invalid but not counted on the account, so its owner is not locked out (docs/security.md
      // "Concurrent logins").
      expect(new Set(results.filter((r) => r.status !== 200).map(codeOf))).toEqual(
        new Set(['mfa.code_invalid']),
      );
      const row = await userRow(user.id);
      expect(row.lockedUntil).toBeNull();
      expect(row.failedLoginCount).toBe(0);
    },
    SUITE_MS,
  );

  it(
    `accepts one TOTP step once out of ${PARALLEL} parallel presentations`,
    async () => {
      const { user, secret } = await mfaUser('stepper');
      await resetCounter(user.id);
      await awayFromStepBoundary(10_000);
      const tokens = await challenges(user, PARALLEL);
      // The confirm code's step is used already; the next step is inside the window and unused.
      const code = totpCode(secret, 1);
      const results = await Promise.all(
        tokens.map((mfa_token) => app.post('/api/mfa/verify', { mfa_token, code })),
      );
      tally(results);
      expect(results.filter((r) => r.status === 200 && r.body?.access_token)).toHaveLength(1);
      // The losers presented a code that was valid a moment ago (a double-submit, not a guess): refused with
      // 401 mfa.code_invalid but not counted on the account, so its owner is not locked out (docs/security.md
      // "Concurrent logins").
      expect(new Set(results.filter((r) => r.status !== 200).map(codeOf))).toEqual(
        new Set(['mfa.code_invalid']),
      );
      const row = await userRow(user.id);
      expect(row.lockedUntil).toBeNull();
      expect(row.failedLoginCount).toBe(0);
    },
    SUITE_MS,
  );

  it(
    `rotates one refresh token once out of ${PARALLEL} parallel presentations; the login survives`,
    async () => {
      const user = await app.createUser({ username: 'refresher' });
      const client = await app.loginAs(user);
      const results = await Promise.all(
        Array.from({ length: PARALLEL }, () =>
          app.post('/api/auth/refresh-token', { refresh_token: client.refreshToken }),
        ),
      );
      tally(results);
      const wins = results.filter((r) => r.status === 200);
      expect(wins).toHaveLength(1);
      // SPEC "Refresh token and login": a reuse inside the grace window is refused, the login kept.
      expect(results.filter((r) => r.status !== 200).map(codeOf)).toEqual(
        Array.from({ length: PARALLEL - 1 }, () => 'auth.refresh_token_revoked'),
      );
      const next = await app.post('/api/auth/refresh-token', { refresh_token: wins[0]!.body.refresh_token });
      expect(next.status).toBe(200);
    },
    SUITE_MS,
  );

  it(
    `opens one event socket with one ticket out of ${PARALLEL} parallel presentations`,
    async () => {
      const root = await app.createUser({ username: 'root', isSuperuser: true });
      const client = await app.loginAs(root);
      const issued = await client.post('/api/core/events/ticket');
      expect(issued.status).toBe(200);
      const url = `${app.url.replace(/^http/, 'ws')}/api/core/events/ws?ticket=${encodeURIComponent(issued.body.ticket)}`;
      const outcomes = await Promise.all(
        Array.from(
          { length: PARALLEL },
          () =>
            new Promise<'open' | number>((resolve) => {
              const ws = new WebSocketClient(url);
              const timer = setTimeout(() => {
                ws.close();
                resolve(-1);
              }, 10_000);
              ws.on('message', (data) => {
                if ((JSON.parse(String(data)) as { type?: string }).type === 'snapshot') {
                  clearTimeout(timer);
                  ws.close();
                  resolve('open');
                }
              });
              ws.on('close', (code) => {
                clearTimeout(timer);
                resolve(code);
              });
              ws.on('error', () => undefined);
            }),
        ),
      );
      figures.requests += outcomes.length;
      const opened = outcomes.filter((o) => o === 'open').length;
      if (opened !== 1) figures.failures++;
      expect(opened).toBe(1);
      expect(outcomes.filter((o) => o !== 'open')).toEqual(Array.from({ length: PARALLEL - 1 }, () => 4401));
    },
    SUITE_MS,
  );
});
