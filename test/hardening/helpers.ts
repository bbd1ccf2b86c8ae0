// Shared helpers of the hardening suites (test/hardening/README.md). Each engineer only adds exports here.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../testing/cli-process.js';

// ---------------------------------------------------------------------------------------------------------
// Faults and security (items 4-5): private servers that a test may stop without touching the shared ones.
// ---------------------------------------------------------------------------------------------------------

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Milliseconds `fn` took, with its result. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

/** Median of a list of numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Login timing judged round by round (SPEC "Authentication" 6, SPEC-3 §7 rule 5): `times[name][round]` are the
 * milliseconds of each kind of login, all kinds once per round. Each login counts as a share of its round's
 * mean, so a machine loaded for a few seconds slows a whole round and cancels out; `spread` is how far the
 * kinds' median shares lie apart (0.05: 5 %). A kind that skips Argon2 has a small fraction of the others' share.
 * `line` is the figures for the test's output.
 */
export function roundShares(
  label: string,
  times: Record<string, number[]>,
): { spread: number; line: string } {
  const names = Object.keys(times);
  const rounds = Math.min(...names.map((name) => times[name]!.length));
  const shares: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const mean = names.reduce((sum, name) => sum + times[name]![round]!, 0) / names.length;
    for (const name of names) shares[name]!.push(times[name]![round]! / mean);
  }
  const typical = Object.fromEntries(names.map((name) => [name, median(shares[name]!)]));
  const values = Object.values(typical);
  const spread = Math.max(...values) / Math.min(...values) - 1;
  const medians = Object.fromEntries(names.map((name) => [name, Math.round(median(times[name]!))]));
  const rounded = Object.fromEntries(names.map((name) => [name, Number(typical[name]!.toFixed(3))]));
  const line = `${label}: medians ${JSON.stringify(medians)} ms, shares of a round ${JSON.stringify(rounded)}, spread ${(spread * 100).toFixed(1)} %\n`;
  return { spread, line };
}

/** Polls `probe` until it returns a value other than undefined (errors count as undefined). */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(100);
  }
}

/** The directory of the PostgreSQL server binaries (`initdb`, `pg_ctl`), or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const path = which.stdout.trim();
  return path ? join(path, '..') : undefined;
}

/**
 * A PostgreSQL server of this test alone (own cluster, own port), so it can be stopped mid-test without
 * touching the machine's shared server. Under root the server runs as the `postgres` user (initdb refuses
 * root).
 */
export interface PrivatePostgres {
  url: string;
  port: number;
  /** `pg_ctl stop -m immediate`: the server is gone at once, connections are cut. */
  stop(): void;
  /** Starts the server again on the same port and data. */
  start(): void;
  /** Stops the server (if running) and removes the cluster. Safe to call twice. */
  destroy(): void;
}

/** Starts a private PostgreSQL cluster; throws with the reason when this machine cannot. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('no PostgreSQL server binaries (initdb) found');
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  const run = (tool: string, args: string[]) => {
    const cmd = asRoot ? 'runuser' : join(bin, tool);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    const result = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) {
      throw new Error(`${tool} failed (${result.status}): ${result.stderr || result.stdout || result.error}`);
    }
  };
  try {
    if (asRoot) {
      const pw = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
      const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
      if (pw.status !== 0) throw new Error('running as root and there is no postgres user for initdb');
      chownSync(dir, Number(pw.stdout.trim()), Number(gid.stdout.trim()));
    }
    run('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const port = await freePort();
  let running = false;
  const pg: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start() {
      run('pg_ctl', [
        '-D',
        join(dir, 'data'),
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
        '-l',
        join(dir, 'server.log'),
        '-w',
        'start',
      ]);
      running = true;
    },
    stop() {
      run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']);
      running = false;
    },
    destroy() {
      try {
        if (running) pg.stop();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  try {
    pg.start();
  } catch (error) {
    pg.destroy();
    throw error;
  }
  return pg;
}

/** A Redis server of this test alone (no persistence), killed and restarted at will. */
export interface PrivateRedis {
  url: string;
  port: number;
  /** SIGKILL: connections are cut without a goodbye. */
  kill(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** Starts `redis-server` on a free port; throws when there is no `redis-server`. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const redis: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      const started = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child = started;
      await new Promise<void>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 15_000);
        started.once('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
        started.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (/Ready to accept connections/i.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
        started.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`redis-server exited (${code}): ${out}`));
        });
      });
      started.stdout!.resume();
      started.stderr!.resume();
    },
    async kill() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
    destroy: () => redis.kill(),
  };
  await redis.start();
  return redis;
}

// ---------------------------------------------------------------------------------------------------------
// Bad input, tokens and concurrency (items 1-3). Imports sit here so the two sections stay separate hunks.
// ---------------------------------------------------------------------------------------------------------
import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { count, getTableName, is, Table } from 'drizzle-orm';
import { defineRouter, PaginationQuery, SvcError, z, type MfaSender, type Router } from '@svc/core';
import { startTestApp, type TestApp, type TestDatabase, type TestResponse } from '@svc/core/testing';

/** Every feature on (SPEC "Configuration"), as the bad-input and concurrency suites need. */
export const ALL_FEATURES = {
  activity_log_enabled: true,
  events_broadcast_enabled: true,
  mfa_enabled: true,
  passkeys_enabled: true,
  registration_enabled: true,
} as const;

/** The notes a project router stored (its own "table": must not grow under bad input). */
export interface NoteStore {
  notes: { id: number; title: string; priority: number; tags: string[] }[];
}

/** A small project router with a JSON body, an integer path parameter and a paginated, sortable list. */
export function notesRouter(store: NoteStore): Router {
  const notes = defineRouter({ prefix: '/notes', name: 'notes' });
  const NoteBody = z.object({
    title: z.string().trim().min(1).max(200),
    priority: z.number().int().min(0).max(5),
    tags: z.array(z.string().max(30)).max(10).default([]),
  });
  const sortable = new Set(['id', 'title', 'priority']);
  notes.get('', { summary: 'List notes', query: PaginationQuery }, (ctx) => {
    const field = (ctx.query.orderBy ?? 'id').replace(/^-/, '');
    if (!sortable.has(field)) throw new SvcError('request.validation_error', { loc: ['query', 'orderBy'] });
    return store.notes.slice((ctx.query.page - 1) * ctx.query.pageSize, ctx.query.page * ctx.query.pageSize);
  });
  notes.post('', { summary: 'Create a note', body: NoteBody, status: 201 }, (ctx) => {
    const note = { id: store.notes.length + 1, ...ctx.body };
    store.notes.push(note);
    return note;
  });
  notes.get(
    '/:noteId',
    { summary: 'One note', params: z.object({ noteId: z.coerce.number().int().min(1) }) },
    (ctx) => {
      const note = store.notes.find((n) => n.id === ctx.params.noteId);
      if (!note) throw new SvcError('request.not_found', { loc: ['path', 'noteId'] });
      return note;
    },
  );
  return notes;
}

/** An `mfaSender` that keeps the codes it was given. */
export function capturingSender(): MfaSender & { codes: string[] } {
  const codes: string[] = [];
  return {
    codes,
    async sendEmailCode(message) {
      codes.push(message.otpCode);
    },
    async sendSmsCode(message) {
      codes.push(message.otpCode);
    },
  };
}

/** Starts a test app with every feature on plus the notes router. */
export async function startFullApp(
  database: TestDatabase,
  settings: Record<string, unknown> = {},
  extra: { store?: NoteStore; mfaSender?: MfaSender } = {},
): Promise<TestApp> {
  return startTestApp({
    database,
    settings: { ...ALL_FEATURES, ...settings },
    routers: [notesRouter(extra.store ?? { notes: [] })],
    mfaSender: extra.mfaSender ?? capturingSender(),
  });
}

/** Why `res` is not a uniform error body (SPEC "Errors": `{detail:[{loc,msg,type,code}]}`), or '' when it is. */
export function uniformErrorProblem(res: TestResponse): string {
  const detail = (res.body as { detail?: unknown } | undefined)?.detail;
  if (!Array.isArray(detail) || detail.length === 0) return `not {detail:[...]}: ${res.text.slice(0, 200)}`;
  for (const item of detail as Record<string, unknown>[]) {
    if (!Array.isArray(item.loc)) return `loc is not an array: ${JSON.stringify(item)}`;
    if (typeof item.msg !== 'string') return `msg is not a string: ${JSON.stringify(item)}`;
    if (typeof item.type !== 'string') return `type is not a string: ${JSON.stringify(item)}`;
    if (typeof item.code !== 'string' || item.code === '') return `no string code: ${JSON.stringify(item)}`;
  }
  return '';
}

/** Rows of every auth table of a running app (core and every module's tables), by table name. */
export async function countAuthRows(app: TestApp): Promise<Record<string, number>> {
  const rt = app.app.runtime;
  const orm = rt.authDb.orm as any;
  const counts: Record<string, number> = {};
  for (const group of Object.values(rt.tables)) {
    for (const table of Object.values(group)) {
      if (!is(table, Table)) continue;
      const [row] = await orm.select({ n: count() }).from(table);
      counts[getTableName(table)] = Number(row.n);
    }
  }
  return counts;
}

/** RFC 6238 code (SHA-1, 6 digits, 30 s) of a base32 secret at `stepOffset` steps from now. */
export function totpCode(secret: string, stepOffset = 0, nowMs = Date.now()): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of secret.replace(/=+$/, '').toUpperCase()) {
    bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  }
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(nowMs / 30_000) + stepOffset));
  const hmac = createHmac('sha1', key).update(counter).digest();
  const offset = hmac[hmac.length - 1]! & 0xf;
  const value = (hmac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(value).padStart(6, '0');
}

/** Waits when within `marginMs` of the next 30-second TOTP step, so a test's codes stay in one step. */
export async function awayFromStepBoundary(marginMs = 3_000): Promise<void> {
  const into = Date.now() % 30_000;
  if (into > 30_000 - marginMs) await new Promise((r) => setTimeout(r, 30_000 - into + 200));
}

/** The minimal `ws` client surface the suites use. */
export interface WsClient {
  on(event: 'close', listener: (code: number) => void): void;
  on(event: 'message', listener: (data: unknown) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'open', listener: () => void): void;
  close(): void;
}

/** `ws` is a dependency of @svc/core (not of the repository root's types): borrowed from there. */
export const WebSocketClient = createRequire(
  fileURLToPath(new URL('../../packages/core/package.json', import.meta.url)),
)('ws').WebSocket as new (url: string) => WsClient;

/** Base64url of a JSON value or a string. */
export function b64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

/** A JWT assembled by hand: header and payload as given, signature by `sign` over `header.payload`. */
export function craftJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  sign: (input: string) => string = () => '',
): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${sign(input)}`;
}

/** HMAC signature (base64url) of `input` with `key`, for `craftJwt`. */
export function hmacSigner(key: string | Buffer, hash: 'sha256' | 'sha384' | 'sha512' = 'sha256') {
  return (input: string) => createHmac(hash, key).update(input).digest('base64url');
}

/** Runs `tasks` with at most `limit` in flight. */
export async function inBatches<T>(tasks: (() => Promise<T>)[], limit = 8): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]!();
      }
    }),
  );
  return results;
}

export { freePort };
