import cluster from 'node:cluster';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createCache } from '../kernel/cache/index.js';
import type { Cache } from '../kernel/cache/cache.js';
import { loadSettings } from '../kernel/config/load.js';
import { effectiveLogLevel, type Settings, type SettingsInput } from '../kernel/config/schema.js';
import { openDatabase, type Database } from '../kernel/db/database.js';
import { createTablesSql } from '../kernel/db/ddl.js';
import { coreTables, type Dialect } from '../kernel/db/tables.js';
import {
  createHttpApp,
  type CompiledRoute,
  type MountedRouter,
  type TrustProxy,
} from '../kernel/http/server.js';
import { createLogger, type Logger } from '../kernel/log/logger.js';
import { orderModules, type ModuleInstance, type RequestRecord, type SvcModule } from '../kernel/module.js';
import {
  createPortRegistry,
  DISABLED_WEBHOOK_OUTBOX,
  type Audience,
  type EventSink,
  type PortRegistry,
  type WebhookOutbox,
} from '../kernel/ports.js';
import type { CoreTables } from '../kernel/db/tables.js';
import type { HandlerSettings, Router } from '../kernel/router.js';
import { apiBase } from '../kernel/routes.js';
import { resolveStaticFiles, type StaticFiles } from '../kernel/static-files.js';
import type { EventsOptions } from '../events/index.js';
import type { WebhookOptions } from '../webhooks/index.js'; // SPEC-3 §3
import type { MailOptions } from '../mail/index.js';
import type { MfaOptions } from '../mfa/index.js';
import type { UserSettingsOptions } from '../user-settings/index.js';
import type { OrganizationsOptions } from '../organizations/index.js';
// SPEC-3 section 1: social login (`oauthProviders`)
import type { SocialLoginOptions } from '../social-login/index.js';
import { buildAuthSchema } from './auth-schema.js';
import { coreModules } from './modules.js';
import { SERVICE_NAME, SERVICE_VERSION } from './version.js';

/** A UDP listener started in one worker only (SPEC "Limits": UDP listeners). */
export interface UdpListener {
  port: number;
  host?: string;
  onMessage(message: Buffer, remote: RemoteInfo): void | Promise<void>;
}

/**
 * A project's own schema, migrated by `svc migrations ... --target-name <name>` like the auth schema.
 * @example
 * migrationTargets: { notes: { database: 'main', tables: (settings, dialect) => notesTables(dialect) } }
 */
export interface MigrationTarget {
  /** Which database the tables live in: the main one (`database_url`, else the auth one). @default 'main' */
  database?: 'main' | 'auth';
  /** The drizzle tables of the target for one dialect. */
  tables(settings: Settings, dialect: Dialect): Record<string, unknown>;
}

/**
 * Options of {@link createApp}: the app's own, and those each core module reads (`mfaSender`,
 * `settingsSections`, `events…`), declared by the module (kernel/module.ts `moduleOptions`).
 */
export interface AppOptions
  extends
    MfaOptions,
    MailOptions,
    UserSettingsOptions,
    EventsOptions,
    OrganizationsOptions,
    SocialLoginOptions,
    WebhookOptions {
  /** The project's own migration targets by name (`auth` is the core's). */
  migrationTargets?: Record<string, MigrationTarget>;
  /** The project's routers, mounted under `/api` + `api_v1_prefix`. @default [] */
  routers?: Router[];
  /** Setting values that win over environment, `.env` and YAML (tests, embedding). */
  settings?: Partial<SettingsInput>;
  /** Project directory (`.env`, `svc.yaml`, relative file databases). @default process.cwd() or `--base-dir` */
  baseDir?: string;
  /** Runs after every module started. */
  onStartup?(app: App): void | Promise<void>;
  /** Runs on graceful shutdown, before the databases close. */
  onShutdown?(app: App): void | Promise<void>;
  udpListeners?: UdpListener[];
  /**
   * Folders of files served outside `/api` on the API's origin, e.g. a built frontend (docs/client.md
   * "Serving the frontend"): `index.html` for a folder, no listing, a strict Content-Security-Policy. @default []
   */
  staticFiles?: StaticFiles[];
  /** Log destination. @default process.stderr */
  logStream?: NodeJS.WritableStream;
  /**
   * Further modules (see `defineModule`; same contract as the core's). Their `optionKeys` are read from
   * these options. @default []
   */
  modules?: SvcModule[];
  /** Replace the core module list (tests, advanced). @default the core modules */
  coreModules?: SvcModule[];
}

/** What the CLI passes when it starts an app. */
export interface InitOptions {
  baseDir?: string;
  settings?: Partial<SettingsInput> & Record<string, unknown>;
  env?: Record<string, string | undefined>;
}

export interface ListenOptions {
  host?: string;
  port?: number;
  /** Express `trust proxy`: `--proxy-headers` with `--forwarded-allow-ips`. @default 'loopback' */
  trustProxy?: boolean | string | string[];
  /**
   * On `close()`, how long at most the server keeps answering on the connections it had accepted (with
   * `Connection: close`) before it closes what is left idle, so clients reusing idle keep-alive sockets get
   * answers instead of resets. It ends sooner once every connection has closed. @default 5500 (the 5 s idle
   * timeout and a margin)
   */
  drainWindowMs?: number;
  /** Whether this process starts the UDP listeners. @default true outside cluster workers, worker 1 inside */
  udpListeners?: boolean;
}

/** Everything a running app holds; for the CLI, tests and the migrations package. */
export interface AppRuntime {
  settings: Settings;
  log: Logger;
  authDb: Database;
  db: Database;
  cache: Cache;
  ports: PortRegistry;
  routes: CompiledRoute[];
  /** Every module's tables by module name; `core` holds the kernel's. */
  tables: { core: CoreTables } & Record<string, Record<string, unknown>>;
  /** True when neither `auth_database_url` nor `database_url` is set (an in-memory database stands in). */
  authDatabaseMissing: boolean;
  baseDir: string;
  handler: (req: IncomingMessage, res: ServerResponse) => void;
}

/** A project's application: what `svc serve --app main:app` loads. */
export interface App {
  readonly options: AppOptions;
  /** Loads settings, opens databases and cache, sets up modules. Idempotent. */
  init(options?: InitOptions): Promise<AppRuntime>;
  /** Starts the HTTP server (after `init`). */
  listen(options?: ListenOptions): Promise<{ server: Server; host: string; port: number; url: string }>;
  /** Graceful: stops accepting, lets in-flight requests finish, closes sockets, flushes queues, closes databases. */
  close(): Promise<void>;
  /** Node request listener (initialises on first request with defaults). */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** The runtime; throws before `init`. */
  readonly runtime: AppRuntime;
}

const noEvents: EventSink = {
  emit() {},
  emitCustom() {},
  userChanged() {},
  sessionsEnded() {},
};

/** The webhook outbox while `webhooks_enabled` is false (SPEC-3 §3): records nothing. */
const noWebhooks: WebhookOutbox = DISABLED_WEBHOOK_OUTBOX;

const SHUTDOWN_GRACE_MS = 10_000;
/** How long an idle keep-alive connection stays open (Node's `keepAliveTimeout`). */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/**
 * How long a stopping server goes on answering, with `Connection: close`, on the connections it had accepted:
 * until each is closed, at most svc's own idle timeout and a margin. An idle connection is left to its client
 * (a proxy's upstream `keepalive_timeout`, below svc's 5 s: docs/deployment.md) or to that timeout, as while
 * running: a connection closed sooner could be one the proxy is writing a request to at that moment (a POST
 * it cannot send elsewhere: 502).
 */
const DRAIN_WINDOW_MS = KEEP_ALIVE_TIMEOUT_MS + 500;

/**
 * Creates the application: core modules (auth, users, permissions, settings, MFA, audit, events, health,
 * version) plus the project's routers.
 * @example
 * export const app = createApp({ routers: [notes] });
 */
export function createApp(options: AppOptions = {}): App {
  let runtime: AppRuntime | undefined;
  let starting: Promise<AppRuntime> | undefined;
  let instances: ModuleInstance[] = [];
  let server: Server | undefined;
  let udpSockets: Socket[] = [];
  let closing: Promise<void> | undefined;
  let draining = false;
  let drainWindowMs = DRAIN_WINDOW_MS;

  async function start(init: InitOptions): Promise<AppRuntime> {
    const baseDir = resolve(init.baseDir ?? options.baseDir ?? process.cwd());
    const settings = loadSettings({
      baseDir,
      env: init.env,
      overrides: { ...(options.settings ?? {}), ...(init.settings ?? {}) },
    });
    const log = createLogger(
      { level: effectiveLogLevel(settings), format: settings.log_format, stream: options.logStream },
      'svc',
    );
    const authUrl = settings.auth_database_url || settings.database_url;
    const authDatabaseMissing = authUrl === '';
    if (authDatabaseMissing) {
      log.warn('neither auth_database_url nor database_url is set: using a temporary in-memory database');
    }
    // `server`: every statement of a request is bounded by db_statement_timeout_seconds.
    const authDb = openDatabase({
      url: authUrl || ':memory:',
      settings,
      log: log.child('db'),
      baseDir,
      server: true,
    });
    const db =
      settings.database_url && settings.database_url !== authUrl
        ? openDatabase({ url: settings.database_url, settings, log: log.child('db'), baseDir, server: true })
        : authDb;
    const cache = await createCache({ settings, log: log.child('cache') });
    const core = options.coreModules ?? coreModules;
    // Providers before the modules that require their ports; refuses a required port nobody provides.
    const modules = orderModules([...core, ...(options.modules ?? [])]);
    const kernelTables = coreTables(settings, authDb.dialect);
    const tables: AppRuntime['tables'] = { core: kernelTables };
    for (const module of modules) {
      if (module.tables) tables[module.name] = module.tables(settings, authDb.dialect);
    }
    if (settings.auto_create_auth_schema || authDatabaseMissing) {
      await createAuthSchema(authDb, buildAuthSchema(settings, authDb.dialect, modules));
    }
    const ports = createPortRegistry();
    ports.provide('events', noEvents);
    ports.provide('webhooks', noWebhooks); // SPEC-3 §3: replaced by the webhooks module while enabled
    const userSettingsReader = () => ports.find('userSettings');
    const handlerSettings = Object.freeze({
      ...settings,
      get: async (user: { id: string } | string, path: string) => {
        const reader = userSettingsReader();
        if (!reader) throw new Error('user settings are not available (the settings module is disabled)');
        return reader.get(typeof user === 'string' ? user : user.id, path);
      },
    }) as HandlerSettings;

    const mounted: MountedRouter[] = [];
    const onRequestEnd: ((record: RequestRecord) => void)[] = [];
    const beforeResponse: ((record: RequestRecord) => Promise<void> | undefined)[] = [];
    instances = [];
    for (const module of modules) {
      const instance = await module.setup({
        settings,
        authDb,
        db,
        cache,
        log: log.child(module.name),
        ports,
        options: moduleOptionsOf(module, options),
        tables: tables[module.name] ?? {},
        coreTables: kernelTables,
        allTables: tables,
        baseDir,
      });
      instances.push(instance);
      if (instance.onRequestEnd) onRequestEnd.push(instance.onRequestEnd.bind(instance));
      if (instance.beforeResponse) beforeResponse.push(instance.beforeResponse.bind(instance));
      // disable_core_routers / disable_routers apply in kernel/routes.ts, by router or module name.
      const isCore = core.includes(module);
      for (const router of instance.routers ?? [])
        mounted.push({ router, core: isCore, module: module.name });
    }
    for (const router of options.routers ?? []) mounted.push({ router, core: false });
    // SPEC-2 "Administration and self-service": the account export reads every module's part through this
    // port, gathered once every module is set up (as kernel/http provides the route table).
    ports.provide('accountExport', { parts: gatherAccountExport(modules, instances) });

    const http = createHttpApp({
      settings,
      log,
      ports,
      pages: instances.flatMap((instance) => instance.pages ?? []),
      staticFiles: resolveStaticFiles(options.staticFiles ?? [], {
        baseDir,
        apiBase: apiBase(settings),
        adminConsole: settings.admin_console_enabled,
      }),
      routers: mounted,
      onRequestEnd,
      beforeResponse,
      db,
      authDb,
      cache,
      handlerSettings,
      emit: (type: string, data: Record<string, unknown>, audience?: Audience) =>
        ports.get('events').emitCustom(type, data, audience ?? { kind: 'superusers' }),
      docs: {
        title: settings.app_name !== 'svc' ? settings.app_name : settings.project_name || SERVICE_NAME,
        version: settings.version || SERVICE_VERSION,
        description: settings.description,
      },
    });
    const rt: AppRuntime = {
      settings,
      log,
      authDb,
      db,
      cache,
      ports,
      routes: http.routes,
      tables,
      authDatabaseMissing,
      baseDir,
      handler: http.handler,
    };
    setTrustProxy = http.setTrustProxy;
    runtime = rt;
    for (const instance of instances) await instance.onStartup?.();
    await options.onStartup?.(app);
    return rt;
  }

  /** kernel/http's setter of `trust proxy`, once the HTTP app exists. */
  let setTrustProxy: (value: TrustProxy) => void = () => undefined;

  const app: App = {
    options,
    init(init = {}) {
      starting ??= start(init);
      return starting;
    },
    async listen(listenOptions = {}) {
      drainWindowMs = listenOptions.drainWindowMs ?? DRAIN_WINDOW_MS;
      const rt = await app.init();
      setTrustProxy(listenOptions.trustProxy ?? 'loopback');
      const host = listenOptions.host ?? rt.settings.host;
      const port = listenOptions.port ?? rt.settings.port;
      server = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS }, (req, res) => {
        // While draining, every answer closes its connection (see stopServer).
        if (draining) res.shouldKeepAlive = false;
        rt.handler(req, res);
      });
      for (const instance of instances) instance.onServer?.(server);
      await new Promise<void>((resolvePromise, reject) => {
        server!.once('error', reject);
        server!.listen(port, host, () => {
          server!.off('error', reject);
          resolvePromise();
        });
      });
      const address = server.address() as AddressInfo;
      const startUdp = listenOptions.udpListeners ?? (!cluster.isWorker || cluster.worker?.id === 1);
      if (startUdp) udpSockets = await startUdpListeners(options.udpListeners ?? [], rt.log);
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      // SPEC "Command-line interface" (`--proxy-headers`, `--forwarded-allow-ips`): say which peers may set the
      // client address, since it keys auth_rate_limit and the logs (docs/deployment.md "Behind a proxy").
      const trusted = listenOptions.trustProxy ?? 'loopback';
      if (trusted !== false && (!cluster.isWorker || cluster.worker?.id === 1)) {
        rt.log.info(
          `proxy headers (X-Forwarded-For, X-Forwarded-Proto) are trusted from: ${describeTrust(trusted)}; ` +
            'a valid IP address in X-Forwarded-For from these peers is the client address',
        );
      }
      return {
        server,
        host: address.address,
        port: address.port,
        url: `http://${shownHost}:${address.port}`,
      };
    },
    close() {
      closing ??= (async () => {
        const rt = runtime;
        for (const instance of instances) {
          try {
            await instance.onServerClosing?.();
          } catch (error) {
            rt?.log.error('module shutdown failed', { exc: error });
          }
        }
        if (server) {
          draining = true;
          await stopServer(server, drainWindowMs);
        }
        for (const socket of udpSockets) socket.close();
        for (const instance of [...instances].reverse()) {
          try {
            await instance.onShutdown?.();
          } catch (error) {
            rt?.log.error('module shutdown failed', { exc: error });
          }
        }
        await options.onShutdown?.(app);
        if (rt) {
          await rt.cache.close().catch(() => undefined);
          if (rt.db !== rt.authDb) await rt.db.close().catch(() => undefined);
          await rt.authDb.close().catch(() => undefined);
          // The logger batches its lines (docs/performance.md): write the last ones before close() resolves.
          rt.log.flush?.();
        }
      })();
      return closing;
    },
    handler(req, res) {
      if (runtime) {
        runtime.handler(req, res);
        return;
      }
      app.init().then(
        (rt) => rt.handler(req, res),
        () => {
          res.statusCode = 500;
          res.end();
        },
      );
    },
    get runtime() {
      if (!runtime) throw new Error('the app is not initialised: await app.init() first');
      return runtime;
    },
  };
  return app;
}

/** The modules' `accountExport` entries by top-level key; a key two modules claim refuses the start. */
function gatherAccountExport(
  modules: readonly SvcModule[],
  instances: readonly ModuleInstance[],
): Record<string, (userId: string) => Promise<unknown>> {
  const parts: Record<string, (userId: string) => Promise<unknown>> = {};
  const owners = new Map<string, string>();
  instances.forEach((instance, index) => {
    const name = modules[index]!.name;
    for (const [key, part] of Object.entries(instance.accountExport ?? {})) {
      const owner = owners.get(key);
      if (owner !== undefined) {
        throw new Error(`modules '${owner}' and '${name}' both export the account key '${key}'`);
      }
      owners.set(key, name);
      parts[key] = part;
    }
  });
  return parts;
}

/**
 * Graceful stop. It stops accepting first: a new connection is refused (ECONNREFUSED), which a client knows
 * never carried its request, instead of sitting in the accept backlog and being reset when the listener
 * closes (a reset after the request was sent leaves the client unable to tell whether a write happened).
 * The connections already accepted keep being served, every answer with `Connection: close`, until each has
 * closed or the drain window ({@link DRAIN_WINDOW_MS}) is over, so a client that reuses an idle keep-alive
 * socket gets an answer instead of a reset; then what is still idle is closed, and requests in progress get a
 * grace period before everything left is cut. `http.Server#close` is not used when draining: since Node 19 it also destroys every connection
 * without a request in progress, including one just accepted whose request has not been read yet.
 */
async function stopServer(server: Server, drainWindowMs: number): Promise<void> {
  const closed = new Promise<void>((resolvePromise) => {
    if (drainWindowMs > 0) NetServer.prototype.close.call(server, () => resolvePromise());
    else server.close(() => resolvePromise());
  });
  const deadline = Date.now() + drainWindowMs;
  while (Date.now() < deadline && (await openConnections(server)) > 0) await sleep(25);
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
  timer.unref();
  await closed;
  clearTimeout(timer);
}

function openConnections(server: Server): Promise<number> {
  return new Promise((resolvePromise) =>
    server.getConnections((error, count) => resolvePromise(error ? 0 : count)),
  );
}

async function startUdpListeners(listeners: UdpListener[], log: Logger): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (const listener of listeners) {
    const socket = createSocket(listener.host?.includes(':') ? 'udp6' : 'udp4');
    socket.on('message', (message, remote) => {
      Promise.resolve()
        .then(() => listener.onMessage(message, remote))
        .catch((error) => log.error('UDP listener failed', { exc: error, port: listener.port }));
    });
    socket.on('error', (error) => log.error('UDP socket error', { exc: error, port: listener.port }));
    await new Promise<void>((resolvePromise) => socket.bind(listener.port, listener.host, resolvePromise));
    sockets.push(socket);
  }
  return sockets;
}

/**
 * The `createApp` options a module declared (`optionKeys`); a module without the declaration (a plain
 * object) gets them all, as before modules declared theirs.
 */
function moduleOptionsOf(module: SvcModule, options: AppOptions): Record<string, unknown> {
  const all: Record<string, unknown> = { ...options };
  if (!module.optionKeys) return all;
  return Object.fromEntries(module.optionKeys.map((key) => [key, all[key]]));
}

/** Creates the auth tables that do not exist yet (`auto_create_auth_schema`). */
export async function createAuthSchema(db: Database, tables: Record<string, unknown>): Promise<void> {
  const statements = await createTablesSql(db.dialect, tables);
  for (const statement of statements) {
    try {
      await db.exec(statement);
    } catch (error) {
      // PostgreSQL foreign keys have no IF NOT EXISTS: an existing constraint means the schema is there.
      const code = (error as { code?: string }).code;
      if (code !== '42710' && code !== '42P07') throw error;
    }
  }
}

/** The `trust proxy` value as a reader would say it. */
function describeTrust(value: unknown): string {
  if (value === true) return 'every peer';
  if (Array.isArray(value)) return value.join(', ');
  return String(value);
}
