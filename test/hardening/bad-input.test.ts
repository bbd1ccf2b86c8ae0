// Issue 11, item 1: bad input on every route, generated from the two OpenAPI documents. Every request below is
// malformed; each must answer a 4xx in the uniform error format with a string code (SPEC "Errors"), never a
// 500, never a crash, and must store nothing.
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import {
  describeEachDatabase,
  type LoggedInClient,
  type TestApp,
  type TestResponse,
} from '@svc/core/testing';
import { countAuthRows, inBatches, startFullApp, uniformErrorProblem, type NoteStore } from './helpers.js';

const SUITE_MS = 300_000;
/** express body limit of the kernel (`bodyLimit` default '1mb'); twice that must be refused with 413. */
const HUGE_BODY_BYTES = 2 * 1024 * 1024;
const DEEP_LEVELS = 10_000;
const WRONG_PASSWORD = 'wrong-password-0000';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: Json[];
  format?: string;
  minLength?: number;
  minimum?: number;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  $ref?: string;
  default?: Json;
}
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  security?: unknown[];
}
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** One generated request. `tolerated`: the input is odd but harmless (unknown names are ignored): < 500 only. */
interface Case {
  op: string;
  what: string;
  method: string;
  path: string;
  body?: { contentType: string; data: string | Uint8Array };
  tolerated?: boolean;
}

interface Figures {
  operations: number;
  tried: number;
  failures: string[];
  byStatus: Record<number, number>;
}

// ----- schema helpers -------------------------------------------------------------------------------------

function resolver(doc: OpenApi) {
  const resolve = (schema: Schema | undefined): Schema => {
    if (!schema) return {};
    if (schema.$ref) return resolve(doc.components?.schemas?.[schema.$ref.split('/').pop()!]);
    if (schema.allOf?.length === 1) return resolve(schema.allOf[0]);
    return schema;
  };
  return resolve;
}

function typesOf(schema: Schema, resolve: (s: Schema | undefined) => Schema): Set<string> {
  const s = resolve(schema);
  const branches = s.anyOf ?? s.oneOf;
  if (branches) return new Set(branches.flatMap((b) => [...typesOf(b, resolve)]));
  if (s.enum) return new Set(s.enum.map((v) => (v === null ? 'null' : typeof v)));
  const t = s.type;
  if (!t) return new Set(['any']);
  const list = Array.isArray(t) ? t : [t];
  return new Set(list.map((x) => (x === 'integer' ? 'number' : x)));
}

function baseValue(schema: Schema, resolve: (s: Schema | undefined) => Schema): Json {
  const s = resolve(schema);
  const branches = s.anyOf ?? s.oneOf;
  if (branches) return baseValue(branches.find((b) => resolve(b).type !== 'null') ?? branches[0]!, resolve);
  if (s.enum) return s.enum[0]!;
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
  switch (t) {
    case 'string':
      if (s.format === 'email') return 'base@example.com';
      if (s.format === 'uuid') return randomUUID();
      return 'a'.repeat(Math.max(s.minLength ?? 3, 3));
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object': {
      const out: Record<string, Json> = {};
      for (const name of s.required ?? []) out[name] = baseValue(s.properties?.[name] ?? {}, resolve);
      return out;
    }
    default:
      return 'a';
  }
}

/** A value of each JSON type, to send where the schema wants another. */
const WRONG_VALUES: [string, Json][] = [
  ['number', 12345],
  ['boolean', true],
  ['string', 'not-the-right-type'],
  ['array', ['x', 1]],
  ['object', { nested: { x: 1 } }],
  ['null', null],
];

const ORDER_BY_INJECTIONS = [
  'username;drop table x',
  '-password_hash',
  'password_hash',
  '(select 1)',
  "id' OR '1'='1",
  'id,(select pg_sleep(5))',
  '1',
  '-',
  '__proto__',
  'constructor',
  '%00',
];

// ----- case generation ------------------------------------------------------------------------------------

interface Fixtures {
  missingUserId: string;
  existingCodename: string;
  existingGroup: string;
}

/** Valid-looking path parameter values that reach the handler but change nothing (missing records). */
function basePathValue(name: string, fx: Fixtures): string {
  if (name === 'user_id' || name === 'userId') return fx.missingUserId;
  if (name === 'category') return 'appearance';
  if (name === 'key') return 'theme';
  return '999999';
}

/**
 * Request bodies that are wrong only at the service level (wrong current password, too-short new password,
 * existing names, missing records), so a mutation that slips through validation still stores nothing.
 */
function baseBodyOverride(method: string, path: string, fx: Fixtures): Record<string, Json> | undefined {
  const key = `${method} ${path}`;
  const table: Record<string, Record<string, Json>> = {
    'POST /api/auth/token': { username: 'nobody-here', password: WRONG_PASSWORD },
    // An existing username: 400 auth.username_taken unless a mutation of the username slips through.
    'POST /api/auth/register': {
      username: 'victim',
      password: 'a-long-enough-password',
      email: 'new@example.com',
      firstName: 'N',
      lastName: 'N',
    },
    'PATCH /api/auth/user': { email: 'changed@example.com', currentPassword: WRONG_PASSWORD },
    'POST /api/auth/user/password': { currentPassword: WRONG_PASSWORD, newPassword: 'a-brand-new-password' },
    'PUT /api/auth/user/settings/{category}/{key}': { value: 'neon' },
    'PATCH /api/auth/user/settings': { appearance: { theme: 'neon' } },
    'POST /api/auth/refresh-token': { refresh_token: 'not-a-token' },
    'POST /api/mfa/verify': { mfa_token: 'not-a-token', code: '000000' },
    'POST /api/mfa/disable': { password: WRONG_PASSWORD },
    'POST /api/mfa/backup-codes/regenerate': { password: WRONG_PASSWORD },
    'POST /api/mfa/sms/setup': { phone_number: '0123456789' },
    'POST /api/admin/permissions/permissions': { codename: fx.existingCodename, description: 'd' },
    'POST /api/admin/permissions/groups': { name: fx.existingGroup, description: 'd', permissionIds: [] },
    'POST /api/notes': { title: 'note', priority: 9 },
    // A taken username: 400 auth.username_taken unless a mutation slips through (it would create a user).
    'POST /api/admin/user/invite': { email: 'invitee@example.com', username: 'victim' },
    // No account has this address: nothing is stored.
    'POST /api/auth/password/forgot': { email: 'nobody@example.com' },
  };
  return table[key];
}

function invalidUtf8Json(obj: Record<string, Json>, field: string): Uint8Array {
  const marker = '__INVALID_UTF8__';
  const text = JSON.stringify({ ...obj, [field]: marker });
  const [before, after] = text.split(marker) as [string, string];
  // 0xC3 0x28: a two-byte lead followed by a non-continuation byte; 0xFF never occurs in UTF-8.
  return Buffer.concat([
    Buffer.from(before),
    Buffer.from([0x61, 0xc3, 0x28, 0xff, 0xfe]),
    Buffer.from(after),
  ]);
}

const LOGOUT = 'POST /api/auth/logout';

function generateCases(doc: OpenApi, fx: Fixtures): { cases: Case[]; operations: number } {
  const resolve = resolver(doc);
  const cases: Case[] = [];
  let operations = 0;
  for (const [template, methods] of Object.entries(doc.paths)) {
    for (const [lower, op] of Object.entries(methods)) {
      const method = lower.toUpperCase();
      if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) continue;
      operations++;
      const opName = `${method} ${template}`;
      const params = (op.parameters ?? []).filter((p) => p.in === 'path');
      const queries = (op.parameters ?? []).filter((p) => p.in === 'query');
      const pathWith = (overrides: Record<string, string> = {}) =>
        template.replace(/\{(\w+)\}/g, (_, name: string) =>
          name in overrides ? overrides[name]! : encodeURIComponent(basePathValue(name, fx)),
        );
      // SPEC "Refresh token and login": logout with a body token that is not the caller's revokes every login
      // of the caller (204), so any string there is a valid request; only wrong types must be refused.
      const logout = opName === LOGOUT;
      const add = (what: string, c: Omit<Case, 'op' | 'what' | 'method'>) =>
        cases.push({
          op: opName,
          what,
          method,
          ...c,
          tolerated:
            c.tolerated ||
            (logout && !/instead of|is (array|null|string|number)|huge|malformed|charset/.test(what)),
        });

      const [contentType, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
      const bodySchema = media ? resolve(media.schema) : undefined;
      const isForm = contentType === 'application/x-www-form-urlencoded';
      const base = bodySchema
        ? ((baseBodyOverride(method, template, fx) ?? baseValue(bodySchema, resolve)) as Record<string, Json>)
        : undefined;
      const encode = (obj: Record<string, Json>) =>
        isForm
          ? {
              contentType,
              data: new URLSearchParams(
                Object.entries(obj).map(([k, v]): [string, string] => [
                  k,
                  typeof v === 'string' ? v : JSON.stringify(v),
                ]),
              ).toString(),
            }
          : { contentType: 'application/json', data: JSON.stringify(obj) };
      // A body that fails validation: only path and query are under test in those cases.
      const neutralBody = base ? encode(base) : undefined;

      // Path parameters: wrong type, out of range, overlong, traversal, NUL and control bytes, bad encoding.
      for (const p of params) {
        const values: [string, string][] = [
          ['wrong type', 'abc'],
          ['negative', '-1'],
          ['zero', '0'],
          ['fraction', '1.5'],
          ['huge number', '99999999999999999999999999'],
          ['overlong', 'x'.repeat(5_000)],
          ['traversal', '..%2F..%2Fetc%2Fpasswd'],
          ['dot-dot', '%2E%2E'],
          ['NUL', 'a%00b'],
          ['control characters', '%01%1B%5B2J%7F'],
          ['quote injection', "1'%20OR%20'1'%3D'1"],
          ['invalid UTF-8 escape', '%FF%FE'],
          ['truncated escape', '%E0%A4%A'],
          ['lone surrogate escape', '%ED%A0%80'],
        ];
        for (const [what, value] of values) {
          // A DELETE or a no-body write with a valid-looking parameter would act: only values no record has.
          add(`path ${p.name}: ${what}`, { path: pathWith({ [p.name]: value }), body: neutralBody });
        }
      }

      // Query parameters.
      for (const q of queries) {
        const qTypes = typesOf(q.schema ?? {}, resolve);
        const values: [string, string][] = [
          ['overlong', 'x'.repeat(5_000)],
          ['NUL', 'a%00b'],
          ['invalid UTF-8 escape', '%FF'],
          ['repeated', 'a&' + encodeURIComponent(q.name) + '=b'],
        ];
        if (!qTypes.has('string') || qTypes.has('number')) {
          values.push(
            ['wrong type', 'abc'],
            ['negative', '-5'],
            ['float overflow', '1e309'],
            ['huge', '9'.repeat(40)],
          );
        }
        if (q.name === 'orderBy') {
          for (const inj of ORDER_BY_INJECTIONS) values.push([`injection ${inj}`, encodeURIComponent(inj)]);
        }
        for (const [what, value] of values) {
          if (method !== 'GET' && !neutralBody) continue; // a bodiless write would act on a valid query
          add(`query ${q.name}: ${what}`, {
            path: `${pathWith()}?${encodeURIComponent(q.name)}=${value}`,
            body: neutralBody,
            // The query parser decodes a bad escape to U+FFFD: a harmless text for a free-text filter.
            tolerated: what === 'invalid UTF-8 escape' && qTypes.has('string'),
          });
        }
      }
      if (method === 'GET') {
        add('unknown query parameters', {
          path: `${pathWith()}?unknownParam=1&__proto__=x&constructor%5Bprototype%5D=1&a%5Bb%5D%5Bc%5D=1`,
          tolerated: true,
        });
      }

      // Bodies: every route, since the parser runs before routing.
      const bodyless = !bodySchema;
      add('huge body', {
        path: pathWith(),
        body: {
          contentType: 'application/json',
          data: JSON.stringify({ blob: 'x'.repeat(HUGE_BODY_BYTES) }),
        },
      });
      // V8 parses 10,000 levels without recursion limits; a route that takes no body, or only known keys,
      // ignores the nesting. A bodiless write (ticket, TOTP setup) would act, so it gets only parser errors.
      const ignoresNesting = method === 'GET' || (bodySchema?.required ?? []).length === 0;
      if (!(bodyless && method !== 'GET'))
        add('deep array nesting', {
          path: pathWith(),
          tolerated: ignoresNesting,
          body: { contentType: 'application/json', data: '['.repeat(DEEP_LEVELS) + ']'.repeat(DEEP_LEVELS) },
        });
      if (!(bodyless && method !== 'GET'))
        add('deep object nesting', {
          path: pathWith(),
          tolerated: ignoresNesting,
          body: {
            contentType: 'application/json',
            data: '{"a":'.repeat(DEEP_LEVELS) + '1' + '}'.repeat(DEEP_LEVELS),
          },
        });
      add('malformed JSON', {
        path: pathWith(),
        body: { contentType: 'application/json', data: '{"a": tru' },
      });
      add('unsupported charset', {
        path: pathWith(),
        body: { contentType: 'application/json; charset=iso-8859-1', data: '{}' },
      });
      add('unsupported content encoding', {
        path: pathWith(),
        body: { contentType: 'application/json', data: '\u001f\u008b not gzip' },
      });

      if (!bodySchema || !base) continue;
      const props = bodySchema.properties ?? {};
      const required = bodySchema.required ?? [];

      for (const [name, propSchema] of Object.entries(props)) {
        const want = typesOf(propSchema, resolve);
        for (const [type, value] of WRONG_VALUES) {
          if (want.has(type) || want.has('any')) continue;
          if (isForm && (type === 'string' || type === 'number' || type === 'boolean')) continue; // all text
          add(`body ${name}: ${type} instead of ${[...want].join('|')}`, {
            path: pathWith(),
            body: encode({ ...base, [name]: value }),
          });
        }
        if (want.has('string')) {
          add(`body ${name}: overlong`, {
            path: pathWith(),
            body: encode({ ...base, [name]: 'x'.repeat(200_000) }),
          });
          add(`body ${name}: NUL`, { path: pathWith(), body: encode({ ...base, [name]: 'a\u0000b' }) });
          add(`body ${name}: control characters`, {
            path: pathWith(),
            body: encode({ ...base, [name]: 'a\u0001\u001b[2J\u007f\u0085\u2028b' }),
          });
          add(`body ${name}: lone surrogate`, {
            path: pathWith(),
            body: encode({ ...base, [name]: 'a\ud800b' }),
          });
          if (!isForm) {
            add(`body ${name}: invalid UTF-8`, {
              path: pathWith(),
              body: { contentType: 'application/json', data: invalidUtf8Json(base, name) },
            });
          }
        }
      }
      for (const name of required) {
        const { [name]: _dropped, ...rest } = base;
        add(`body missing ${name}`, { path: pathWith(), body: encode(rest) });
      }
      if (isForm) {
        add('form: too many parameters', {
          path: pathWith(),
          body: { contentType, data: Array.from({ length: 200 }, (_, i) => `p${i}=1`).join('&') },
        });
        add('form: invalid escapes', {
          path: pathWith(),
          body: { contentType, data: 'username=%FF%FE&password=%' },
        });
        add('form: JSON instead', {
          path: pathWith(),
          body: { contentType: 'application/json', data: '{}' },
        });
      } else {
        for (const [what, data] of [
          ['array', '[]'],
          ['null', 'null'],
          ['string', '"body"'],
          ['number', '42'],
          [
            'prototype pollution',
            '{"__proto__":{"isSuperuser":true},"constructor":{"prototype":{"polluted":1}}}',
          ],
        ] as const) {
          if (what === 'prototype pollution' && required.length === 0) continue; // would be a valid empty body
          add(`body is ${what}`, { path: pathWith(), body: { contentType: 'application/json', data } });
        }
        if (required.length > 0) {
          add('form body to a JSON route', {
            path: pathWith(),
            body: { contentType: 'application/x-www-form-urlencoded', data: 'a=1' },
          });
          add('text body to a JSON route', {
            path: pathWith(),
            body: { contentType: 'text/plain', data: '{}' },
          });
        }
        add('unknown fields next to a refused base', {
          path: pathWith(),
          body: encode({ ...base, unknownField: 'x', isSuperuser: true, __extra__: { a: 1 } }),
          tolerated: true,
        });
      }
    }
  }
  return { cases, operations };
}

// ----- sending ---------------------------------------------------------------------------------------------

/** node:http, not fetch: fetch refuses a GET with a body and normalises paths; the raw request is the point. */
function send(baseUrl: string, c: Case, token?: string): Promise<TestResponse> {
  const headers: Record<string, string> = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  const data = c.body ? Buffer.from(c.body.data) : undefined;
  if (c.body) {
    headers['Content-Type'] = c.body.contentType;
    headers['Content-Length'] = String(data!.length);
  }
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, method: c.method, path: c.path, headers, timeout: 20_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
          resolve({ status: res.statusCode ?? 0, headers: h, body, text });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer in 20 s: ${c.method} ${c.path.slice(0, 80)}`)));
    // The server may answer 413 and close before reading the whole body: that answer is what counts.
    req.on('error', (error) => reject(error));
    req.end(data);
  });
}

function check(c: Case, res: TestResponse, who: string, figures: Figures): void {
  figures.tried++;
  figures.byStatus[res.status] = (figures.byStatus[res.status] ?? 0) + 1;
  const label = `${who} ${c.op} — ${c.what}: ${res.status}`;
  if (res.status >= 500) {
    figures.failures.push(`${label} ${res.text.slice(0, 300)}`);
    return;
  }
  if (res.status < 400) {
    if (!c.tolerated) figures.failures.push(`${label} accepted`);
    else if (/unknownField|__extra__|polluted/.test(res.text))
      figures.failures.push(`${label} echoed unknown fields`);
    return;
  }
  const problem = uniformErrorProblem(res);
  if (problem) figures.failures.push(`${label} ${problem}`);
}

// ----- the suite -------------------------------------------------------------------------------------------

describeEachDatabase('bad input on every route (SPEC "Errors")', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  let loggingOut: LoggedInClient;
  const store: NoteStore = { notes: [] };
  const cases: Case[] = [];
  const figures: Figures = { operations: 0, tried: 0, failures: [], byStatus: {} };
  let before: Record<string, number> = {};

  beforeAll(async () => {
    app = await startFullApp(database, {}, { store });
    // No email: `POST /mfa/email/setup` answers 400 mfa.no_email instead of enrolling.
    const root = await app.createUser({ username: 'root', isSuperuser: true, email: null });
    const victim = await app.createUser({ username: 'victim', email: 'victim@example.com' });
    admin = await app.loginAs(root);
    // A logout whose body token is not the caller's ends every session of the caller, access tokens included
    // (SPEC-2 "Sessions"): sent with the superuser's token, it would turn every later case into a 401.
    loggingOut = await app.loginAs(victim);
    const perm = await admin.post('/api/admin/permissions/permissions', {
      codename: 'notes.read',
      description: '',
    });
    const group = await admin.post('/api/admin/permissions/groups', {
      name: 'readers',
      description: '',
      permissionIds: [],
    });
    expect([perm.status, group.status]).toEqual([201, 201]);
    const core = await app.get('/openapi-core.json');
    const project = await app.get('/openapi.json');
    expect([core.status, project.status]).toEqual([200, 200]);
    const fx: Fixtures = {
      missingUserId: randomUUID(),
      existingCodename: 'notes.read',
      existingGroup: 'readers',
    };
    for (const doc of [core.body as OpenApi, project.body as OpenApi]) {
      const generated = generateCases(doc, fx);
      cases.push(...generated.cases);
      figures.operations += generated.operations;
    }
    before = await countAuthRows(app);
  }, SUITE_MS);

  afterAll(async () => {
    const statuses = Object.entries(figures.byStatus)
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
    console.log(
      `bad input [${database.label}]: ${figures.operations} operations, ${figures.tried} requests tried, ` +
        `${figures.failures.length} failures, data lost: 0 (${statuses})`,
    );
    await app?.close();
  });

  it('generates cases for every operation of both OpenAPI documents', () => {
    expect(figures.operations).toBeGreaterThanOrEqual(40);
    const ops = new Set(cases.map((c) => c.op));
    expect(ops.size).toBe(figures.operations);
    expect(ops).toContain('GET /api/notes');
    expect(ops).toContain('POST /api/auth/token');
  });

  it(
    'answers every malformed request as the superuser with a uniform 4xx',
    async () => {
      const failures = figures.failures.length;
      const results = await inBatches(
        cases.map(
          (c) => async () =>
            [c, await send(app.url, c, (c.op === LOGOUT ? loggingOut : admin).accessToken)] as const,
        ),
        6,
      );
      for (const [c, res] of results) check(c, res, 'superuser', figures);
      expect(figures.failures.slice(failures)).toEqual([]);
    },
    SUITE_MS,
  );

  it(
    'answers every malformed request anonymously with a uniform 4xx',
    async () => {
      const failures = figures.failures.length;
      const results = await inBatches(
        cases.map((c) => async () => [c, await send(app.url, c)] as const),
        6,
      );
      for (const [c, res] of results) check(c, res, 'anonymous', figures);
      expect(figures.failures.slice(failures)).toEqual([]);
    },
    SUITE_MS,
  );

  it('still answers /api/health/live and the superuser token still works', async () => {
    const live = await app.get('/api/health/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    const me = await admin.get('/api/auth/user');
    expect(me.status).toBe(200);
  });

  it('stored nothing: every auth table and the project store keep their row counts', async () => {
    const after = await countAuthRows(app);
    const activity = Object.keys(after).find((t) => t.endsWith('activity_log'));
    const refresh = Object.keys(after).find((t) => t.endsWith('refresh_token'))!;
    // The activity log legitimately records the 4xx writes; refresh tokens of our login may only go away.
    const strip = (counts: Record<string, number>) => {
      const { [activity ?? '']: _a, [refresh]: _r, ...rest } = counts;
      return rest;
    };
    expect(strip(after)).toEqual(strip(before));
    expect(after[refresh]).toBeLessThanOrEqual(before[refresh]!);
    expect(store.notes).toEqual([]);
  });
});
