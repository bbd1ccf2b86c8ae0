import { Writable } from 'node:stream';
import { createApp, type App, type AppOptions } from '../app/create-app.js';
import type { SettingsInput } from '../kernel/config/schema.js';
import type { Router } from '../kernel/router.js';
import { createUserManager, type NewUserInput } from '../users/manage.js';
import type { TestCache, TestDatabase } from './each.js';

/** A 32+ character key for tests only. */
export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdef-0123456789';

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for an empty body. */
  body: T;
  text: string;
}

export interface RequestOptions {
  /** JSON body. */
  body?: unknown;
  /** Form body (`application/x-www-form-urlencoded`). */
  form?: Record<string, string>;
  /** Raw body with its content type. */
  raw?: { contentType: string; data: string | Uint8Array };
  headers?: Record<string, string>;
  token?: string;
}

/** An HTTP client bound to one server (and optionally one access token). */
export interface TestClient {
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  get<T = any>(path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  post<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<TestResponse<T>>;
  put<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<TestResponse<T>>;
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<TestResponse<T>>;
  delete<T = any>(path: string, options?: RequestOptions): Promise<TestResponse<T>>;
}

/** A logged-in client with its tokens. */
export interface LoggedInClient extends TestClient {
  user: TestUser;
  accessToken: string;
  refreshToken: string;
}

export interface TestUser {
  id: string;
  username: string;
  password: string;
  email: string | null;
}

/** A user to create: the fields of `svc users create` (the same user manager stores it). */
export interface CreateUserInput extends Omit<NewUserInput, 'password'> {
  /** @default DEFAULT_TEST_PASSWORD */
  password?: string;
}

export interface TestApp extends TestClient {
  app: App;
  url: string;
  /** A client that sends `token` on every request. */
  as(token: string): TestClient;
  /**
   * Inserts a user directly (password hashed like the server does, once per password per app: users given the
   * same password share its Argon2id hash). Default password: `correct-horse-battery`.
   */
  createUser(input: CreateUserInput): Promise<TestUser>;
  /** Logs in over HTTP (`POST /api/auth/token`) and returns a client carrying the access token. */
  loginAs(user: { username: string; password: string } | TestUser): Promise<LoggedInClient>;
  close(): Promise<void>;
}

export interface StartTestAppOptions extends Omit<AppOptions, 'settings'> {
  database: TestDatabase;
  cache?: TestCache;
  settings?: Partial<SettingsInput>;
  routers?: Router[];
  /**
   * The port to listen on (127.0.0.1), for a test whose settings must name the app's own address before it
   * starts (`public_url`, e.g. the redirect URI registered at an OpenID provider). @default an ephemeral port
   */
  port?: number;
}

export const DEFAULT_TEST_PASSWORD = 'correct-horse-battery';

export function createClient(baseUrl: string, token?: string): TestClient {
  async function request<T>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const bearer = options.token ?? token;
    if (bearer && !('Authorization' in headers) && !('authorization' in headers)) {
      headers.Authorization = `Bearer ${bearer}`;
    }
    let body: string | Uint8Array | undefined;
    if (options.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    } else if (options.raw) {
      headers['Content-Type'] = options.raw.contentType;
      body = options.raw.data;
    } else if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }
  return {
    request,
    get: (path, options) => request('GET', path, options),
    post: (path, body, options) => request('POST', path, { ...options, body }),
    put: (path, body, options) => request('PUT', path, { ...options, body }),
    patch: (path, body, options) => request('PATCH', path, { ...options, body }),
    delete: (path, options) => request('DELETE', path, options),
  };
}

/**
 * Starts a real app on 127.0.0.1 (ephemeral port) on a test database and cache, with the auth schema
 * created at startup.
 */
export async function startTestApp(options: StartTestAppOptions): Promise<TestApp> {
  const { database, cache, settings, port, ...appOptions } = options;
  const app = createApp({
    ...appOptions,
    logStream: appOptions.logStream ?? quietStream(),
    settings: {
      secret_key: TEST_SECRET_KEY,
      auth_database_url: database.url,
      auto_create_auth_schema: true,
      cache_url: cache?.url ?? '',
      cache_prefix: cache?.prefix ?? 'svc:',
      log_level: process.env.SVC_TEST_LOG_LEVEL ?? 'CRITICAL',
      ...settings,
    },
  });
  await app.init({ env: {} });
  // Test clients keep idle sockets open: closing apps at once keeps the suite fast (the drain window is
  // exercised through real `svc serve` processes).
  const { url } = await app.listen({ host: '127.0.0.1', port: port ?? 0, drainWindowMs: 0 });
  const client = createClient(url);
  // One Argon2id hash per password: a test creates many users with the default password, and each hash costs
  // tens of milliseconds of CPU (more on a loaded machine) for nothing that test checks. Logins still verify.
  const hashes = new Map<string, Promise<string>>();
  const hashOnce = (password: string): Promise<string> => {
    let hash = hashes.get(password);
    if (!hash) {
      hash = app.runtime.ports.get('loginGuard').hashPassword(password);
      hash.catch(() => hashes.delete(password));
      hashes.set(password, hash);
    }
    return hash;
  };
  const testApp: TestApp = {
    ...client,
    app,
    url,
    as: (token) => createClient(url, token),
    async createUser(input) {
      const rt = app.runtime;
      const password = input.password ?? DEFAULT_TEST_PASSWORD;
      // The same stored effects as `svc users create`, hashed like the server does.
      const manager = createUserManager({
        db: rt.authDb,
        tables: rt.tables.core,
        hashPassword: hashOnce,
        now: () => new Date(),
      });
      const row = await manager.create({ ...input, username: input.username.trim().toLowerCase(), password });
      return { id: row.id, username: row.username, password, email: row.email };
    },
    async loginAs(user) {
      const res = await client.post('/api/auth/token', undefined, {
        form: { username: user.username, password: user.password },
      });
      const tokens = (res.body?.data ?? res.body) as { access_token?: string; refresh_token?: string };
      if (res.status !== 200 || !tokens?.access_token) {
        throw new Error(`login of ${user.username} failed: ${res.status} ${res.text}`);
      }
      const base = createClient(url, tokens.access_token);
      const full: TestUser =
        'id' in user ? user : { id: '', username: user.username, password: user.password, email: null };
      return {
        ...base,
        user: full,
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token ?? '',
      };
    },
    close: () => app.close(),
  };
  return testApp;
}

/** Log lines of tests go nowhere unless SVC_TEST_LOG_LEVEL asks for them. */
function quietStream(): NodeJS.WritableStream {
  if (process.env.SVC_TEST_LOG_LEVEL) return process.stderr;
  return new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
}
