// SPEC-3 §7 rule 6: anonymous traffic cannot evict security state. A flood of anonymous passkey login options on
// the in-process cache (the default) must leave a mail cooldown, a pending passkey login and a used TOTP step in
// place.
import { spawnSync } from 'node:child_process';
import { describeEachDatabase, type TestApp } from '@svc/core/testing';
import { RedisCache } from '../../packages/core/src/kernel/cache/redis-cache.js';
import type { Logger } from '../../packages/core/src/kernel/log/logger.js';
import { startPrivateRedis, type PrivateRedis } from './helpers.js';
import { eventually, startMailApp, stopMailApp, type TestSmtp } from '../../testing/smtp.js';
import {
  PASSKEY_TEST_ORIGIN,
  PASSKEY_TEST_SETTINGS,
  passkeyOptions,
  registerPasskey,
  SoftAuthenticator,
} from '../../testing/webauthn.js';

/** Entries of the in-process cache: small, so a few hundred anonymous requests would overflow it. */
const MAX_ENTRIES = 50;
const FLOOD = 4 * MAX_ENTRIES;

describeEachDatabase('Security state under anonymous cache pressure (SPEC-3 §7 rule 6)', (database) => {
  let app: TestApp;
  let smtp: TestSmtp;

  beforeAll(async () => {
    ({ app, smtp } = await startMailApp(database, {
      ...PASSKEY_TEST_SETTINGS,
      public_url: 'https://app.example.com',
      cache_max_entries: MAX_ENTRIES,
      account_mail_cooldown_seconds: 3600,
      auth_rate_limit: 0,
    }));
  });
  afterAll(() => stopMailApp({ app, smtp }));

  it('keeps a mail cooldown and a pending passkey login through a flood of anonymous passkey options', async () => {
    const user = await app.createUser({ username: 'flooded', email: 'flooded@example.com' });
    const device = new SoftAuthenticator(PASSKEY_TEST_ORIGIN);
    expect((await registerPasskey(await app.loginAs(user), device)).status).toBe(201);

    // The victim asks for a reset mail (cooldown starts) and begins a passkey login.
    expect((await app.post('/api/auth/password/forgot', { email: 'flooded@example.com' })).status).toBe(202);
    await eventually(() => smtp.messages.length === 1);
    const pending = await passkeyOptions(app);

    const flood: { status: number; code?: string }[] = [];
    for (let i = 0; i < FLOOD; i++) {
      const res = await app.post('/api/auth/passkey/options', { username: `nobody_${i}` });
      flood.push({ status: res.status, code: res.body.detail?.[0]?.code });
    }
    // Pending anonymous challenges are bounded: beyond cache_max_entries a new one is refused, none dropped.
    expect(flood.slice(0, MAX_ENTRIES - 1).every((r) => r.status === 200)).toBe(true);
    expect(flood.slice(MAX_ENTRIES)).toEqual(
      Array.from({ length: FLOOD - MAX_ENTRIES }, () => ({ status: 503, code: 'cache.unavailable' })),
    );

    // The cooldown holds: a second request answers 202 and sends nothing.
    expect((await app.post('/api/auth/password/forgot', { email: 'flooded@example.com' })).status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.messages.filter((m) => m.envelopeTo.includes('flooded@example.com')).length).toBe(1);

    // The pending passkey login still completes.
    const res = await app.post('/api/auth/passkey/token', {
      challengeId: pending.challengeId,
      response: device.get(pending.options),
    });
    expect(res.status).toBe(200);
    expect((await app.as(res.body.access_token).get('/api/auth/user')).body.data.username).toBe('flooded');
  });
});

// The same promise on Redis, by its configuration (docs/deployment.md "Redis"): under noeviction a full server
// refuses the write (503 cache.unavailable) and keeps what it holds; another policy is warned about at connect.
describe('Security state on a full Redis (SPEC-3 §7 rule 6)', () => {
  let redis: PrivateRedis;
  beforeAll(async () => {
    redis = await startPrivateRedis();
  });
  afterAll(() => redis?.destroy());

  function configure(policy: string, maxmemory: string) {
    const port = String(redis.port);
    for (const [name, value] of [
      ['maxmemory-policy', policy],
      ['maxmemory', maxmemory],
    ]) {
      const run = spawnSync('redis-cli', ['-p', port, 'config', 'set', name!, value!], { encoding: 'utf8' });
      expect(run.stdout.trim()).toBe('OK');
    }
  }

  it('refuses writes when full under noeviction and keeps every kept entry', async () => {
    configure('noeviction', '4mb');
    const log = recordingLogger();
    const cache = await RedisCache.connect(redis.url, 'svc:', log);
    try {
      expect(log.records.filter((r) => r.level === 'warn')).toEqual([]);
      await cache.set('account-mail:password_reset:u1', 1, 600, { keep: 'security' });
      let refused: unknown;
      const filler = 'x'.repeat(10_000);
      for (let i = 0; i < 2_000 && !refused; i++) {
        refused = await cache.set(`anonymous:${i}`, filler, 600).then(
          () => undefined,
          (error: unknown) => error,
        );
      }
      expect(refused).toMatchObject({ code: 'cache.unavailable', status: 503 });
      expect(await cache.get('account-mail:password_reset:u1')).toBe(1);
    } finally {
      await cache.close();
    }
  });

  it('warns at connect when the server evicts keys', async () => {
    configure('allkeys-lru', '0');
    const log = recordingLogger();
    const cache = await RedisCache.connect(redis.url, 'svc:', log);
    await cache.close();
    expect(log.records.filter((r) => r.level === 'warn').map((r) => r.message)).toEqual([
      expect.stringMatching(/evicts keys when full \(maxmemory-policy allkeys-lru\): set noeviction/),
    ]);
  });
});

/** A logger that keeps its records. */
function recordingLogger(): Logger & { records: { level: string; message: string }[] } {
  const records: { level: string; message: string }[] = [];
  const logger = {
    records,
    debug: (message: string) => void records.push({ level: 'debug', message }),
    info: (message: string) => void records.push({ level: 'info', message }),
    warn: (message: string) => void records.push({ level: 'warn', message }),
    error: (message: string) => void records.push({ level: 'error', message }),
    child: () => logger,
  };
  return logger;
}
