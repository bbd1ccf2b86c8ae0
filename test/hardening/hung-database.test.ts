// A PostgreSQL that accepts connections but does not answer: a table locked by another session, or a network
// path that swallows the packets. Every statement has a bound (`db_statement_timeout_seconds`); past it the
// request answers 503 db.unavailable in the uniform format (SPEC "Errors"), the readiness probe answers 503
// health.not_ready within its 3 seconds (SPEC "Health and version", "Limits"), liveness stays 200, and once the
// database answers again the same process serves everything without a restart.
import {
  createPostgresDatabase,
  reportSkipped,
  startTestApp,
  TEST_POSTGRES_URL,
  type TestApp,
} from '@svc/core/testing';
import { createLogger, openDatabase, SettingsSchema, type CoreTables } from '@svc/core/internal';
import { getTableName } from 'drizzle-orm';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { eventually, timed } from './helpers.js';

/** The bound the tests configure: small, to keep them fast. */
const STATEMENT_TIMEOUT_SECONDS = 1;
/** An answer after the bound, with a generous margin for a loaded 2-core machine. */
const ANSWER_BUDGET_MS = 5_000;
/** SPEC "Limits": readiness probe database timeout 3 s; the answer may take a little longer on a busy box. */
const READY_BUDGET_MS = 4_500;
/** A request still unanswered after this is reported as hanging (without a bound it would wait forever). */
const HANG_MS = 12_000;
const TEST_MS = 120_000;

interface Answer {
  status: number;
  body: any;
}

/** One request that fails the test, instead of hanging it, when no answer comes within {@link HANG_MS}. */
async function bounded(
  app: TestApp,
  method: string,
  path: string,
  options: { token?: string; form?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  try {
    const res = await fetch(`${app.url}${path}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(HANG_MS),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') {
      throw new Error(`${method} ${path} did not answer within ${HANG_MS} ms`);
    }
    throw error;
  }
}

/** The part of a postgres-js client the lock holder uses (the driver is a dependency of @svc/core only). */
interface PgSession {
  unsafe(query: string): Promise<Record<string, unknown>[]>;
  release(): void;
}
interface PgClient {
  reserve(): Promise<PgSession>;
}

/** A second session on the test database, outside the app, as another program would hold it. */
function openHolder(url: string) {
  const log = createLogger(
    { level: 'CRITICAL', format: 'text', stream: new Writable({ write: (_c, _e, done) => done() }) },
    'holder',
  );
  return openDatabase({ url, settings: SettingsSchema.parse({ db_pool_size: 1, db_max_overflow: 0 }), log });
}

const UNAVAILABLE = {
  detail: [{ loc: [], msg: expect.any(String), type: 'server_error', code: 'db.unavailable' }],
};
const ALICE = { username: 'alice', password: 'correct-horse-battery' };

/** Milliseconds of each answer while the database does not answer, printed as the suite's figures. */
type Figures = Record<string, number>;

async function expectUnavailable(app: TestApp, token: string): Promise<Figures> {
  const me = await timed(() => bounded(app, 'GET', '/api/auth/user', { token }));
  expect(me.value).toEqual({ status: 503, body: UNAVAILABLE });
  expect(me.ms).toBeLessThan(ANSWER_BUDGET_MS);

  const login = await timed(() => bounded(app, 'POST', '/api/auth/token', { form: ALICE }));
  expect(login.value).toEqual({ status: 503, body: UNAVAILABLE });
  expect(login.ms).toBeLessThan(ANSWER_BUDGET_MS);

  const ready = await timed(() => bounded(app, 'GET', '/api/health/ready'));
  expect(ready.value.status).toBe(503);
  expect(ready.value.body.detail[0]).toMatchObject({ code: 'health.not_ready', loc: [] });
  expect(ready.ms).toBeLessThan(READY_BUDGET_MS);

  // The process stays up and serves what needs no database.
  expect(await bounded(app, 'GET', '/api/health/live')).toEqual({ status: 200, body: { status: 'ok' } });
  expect((await bounded(app, 'GET', '/api/version/')).status).toBe(200);
  return { user: Math.round(me.ms), login: Math.round(login.ms), ready: Math.round(ready.ms) };
}

async function expectRecovered(app: TestApp, token: string): Promise<Figures> {
  const started = performance.now();
  const me = await bounded(app, 'GET', '/api/auth/user', { token });
  expect(me.status).toBe(200);
  expect(me.body.data.username).toBe('alice');
  expect((await bounded(app, 'POST', '/api/auth/token', { form: ALICE })).status).toBe(200);
  // Every connection of the pool is usable again: a burst wider than the pool all answers 200.
  const burst = await Promise.all(
    Array.from({ length: 20 }, () => bounded(app, 'GET', '/api/auth/user', { token })),
  );
  expect(burst.map((r) => r.status)).toEqual(Array(20).fill(200));
  // Readiness follows once the faults are past (it remembers a timed-out statement for a few seconds).
  await eventually(
    async () => ((await bounded(app, 'GET', '/api/health/ready')).status === 200 ? true : undefined),
    30_000,
  );
  return { readyAgainAfter: Math.round(performance.now() - started) };
}

if (!TEST_POSTGRES_URL) {
  reportSkipped('a hung database', 'SVC_TEST_POSTGRES_URL is not set');
} else {
  describe('the user table locked by another session [postgres]', () => {
    let created: Awaited<ReturnType<typeof createPostgresDatabase>>;
    let app: TestApp;
    let holder: ReturnType<typeof openHolder>;
    let token = '';

    beforeAll(async () => {
      created = await createPostgresDatabase();
      app = await startTestApp({
        database: { dialect: 'pg', label: 'postgres', url: created.url },
        settings: { db_statement_timeout_seconds: STATEMENT_TIMEOUT_SECONDS },
      });
      token = (await app.loginAs(await app.createUser(ALICE))).accessToken;
      holder = openHolder(created.url);
    }, TEST_MS);

    afterAll(async () => {
      await holder?.close().catch(() => undefined);
      await app?.close().catch(() => undefined);
      await created?.drop();
    }, TEST_MS);

    it(
      'answers 503 db.unavailable within the bound, keeps liveness, frees every connection and recovers',
      async () => {
        const userTable = getTableName((app.app.runtime.tables.core as unknown as CoreTables).user);
        const lock = await (holder.native as PgClient).reserve();
        try {
          await lock.unsafe('BEGIN');
          await lock.unsafe(`LOCK TABLE "${userTable}" IN ACCESS EXCLUSIVE MODE`);

          const figures = await expectUnavailable(app, token);

          // Under a burst wider than the pool (postgres-js queues and pipelines statements behind the
          // blocked ones) every request still answers within the bound, none becomes a 500 or hangs.
          const burst = await timed(() =>
            Promise.all(Array.from({ length: 30 }, () => bounded(app, 'GET', '/api/auth/user', { token }))),
          );
          expect(burst.value.map((r) => `${r.status} ${r.body?.detail?.[0]?.code}`)).toEqual(
            Array(30).fill('503 db.unavailable'),
          );
          expect(burst.ms).toBeLessThan(2 * ANSWER_BUDGET_MS);
          figures.burst30 = Math.round(burst.ms);

          // The server stopped the statements itself (statement_timeout): none of the app's sessions is
          // left waiting on the lock, so the pool holds no stuck connection.
          const waiting = await eventually(async () => {
            const rows = await lock.unsafe(
              `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()
                 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
            );
            return rows[0]!.n === 0 ? 0 : undefined;
          }, 10_000);
          expect(waiting).toBe(0);
          process.stderr.write(`user table locked, ms: ${JSON.stringify(figures)}\n`);
        } finally {
          await lock.unsafe('ROLLBACK').catch(() => undefined);
          lock.release();
        }

        const recovery = await expectRecovered(app, token);
        process.stderr.write(`user table locked, recovery ms: ${JSON.stringify(recovery)}\n`);
      },
      TEST_MS,
    );
  });

  describe('a network path that swallows every byte [postgres]', () => {
    let created: Awaited<ReturnType<typeof createPostgresDatabase>>;
    let proxy: FreezingProxy;
    let app: TestApp;
    let token = '';

    beforeAll(async () => {
      created = await createPostgresDatabase();
      const target = new URL(created.url);
      proxy = await startFreezingProxy(target.hostname, Number(target.port || 5432));
      const through = new URL(created.url);
      through.hostname = '127.0.0.1';
      through.port = String(proxy.port);
      app = await startTestApp({
        database: { dialect: 'pg', label: 'postgres via proxy', url: through.toString() },
        settings: { db_statement_timeout_seconds: STATEMENT_TIMEOUT_SECONDS },
      });
      token = (await app.loginAs(await app.createUser(ALICE))).accessToken;
    }, TEST_MS);

    afterAll(async () => {
      proxy?.thaw();
      await app?.close().catch(() => undefined);
      await proxy?.close();
      await created?.drop();
    }, TEST_MS);

    it(
      'answers 503 db.unavailable within the bound while nothing comes back, and recovers when it does',
      async () => {
        proxy.freeze();
        try {
          const figures = await expectUnavailable(app, token);
          process.stderr.write(`no answer, ms: ${JSON.stringify(figures)}\n`);
        } finally {
          proxy.thaw();
        }
        const recovery = await expectRecovered(app, token);
        process.stderr.write(`no answer, recovery ms: ${JSON.stringify(recovery)}\n`);
      },
      TEST_MS,
    );
  });
}

/**
 * A TCP proxy to PostgreSQL that can stop passing bytes in both directions without closing anything, as a
 * path that drops packets does (TCP retransmits them once it heals, so nothing is lost: here they wait in the
 * socket buffers). New connections are accepted and held while frozen.
 */
interface FreezingProxy {
  port: number;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

async function startFreezingProxy(host: string, port: number): Promise<FreezingProxy> {
  let frozen = false;
  const pairs = new Set<[Socket, Socket]>();
  const held: (() => void)[] = [];
  const join = ([client, upstream]: [Socket, Socket]) => {
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server: Server = createServer((client) => {
    const open = () => {
      const pair: [Socket, Socket] = [client, connect(port, host)];
      pairs.add(pair);
      const drop = () => {
        pairs.delete(pair);
        pair[0].destroy();
        pair[1].destroy();
      };
      for (const socket of pair) socket.on('error', drop).on('close', drop);
      if (!frozen) join(pair);
    };
    client.on('error', () => client.destroy());
    if (frozen) {
      client.pause();
      held.push(open);
    } else open();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    freeze() {
      frozen = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    thaw() {
      if (!frozen) return;
      frozen = false;
      for (const pair of pairs) join(pair);
      for (const open of held.splice(0)) open();
    },
    async close() {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
