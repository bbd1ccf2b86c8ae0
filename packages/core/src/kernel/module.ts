import type { Server } from 'node:http';
import type { Cache } from './cache/cache.js';
import type { Settings } from './config/schema.js';
import type { Database } from './db/database.js';
import type { CoreTables, Dialect } from './db/tables.js';
import type { Logger } from './log/logger.js';
import type { PageRoute } from './page.js';
import type { PortRegistry, Ports } from './ports.js';
import type { Router } from './router.js';

/** What the kernel reports of every finished request (activity recording, metrics). */
export interface RequestRecord {
  method: string;
  /** Path as received (no query string). */
  path: string;
  status: number;
  durationMs: number;
  timestamp: Date;
  /** The bearer token, if any (decoded without a database query by the activity log). */
  bearerToken: string | null;
  /** The `logAs` template of the matched route and its path parameters. */
  logAs?: string;
  params?: Record<string, string>;
  /** A description the handler set (`ctx.describeActivity`); wins over `logAs`. */
  description?: string;
  /** The user the guard loaded, when it did. */
  user?: { id: string; username: string; isSuperuser: boolean; impersonatorId?: string } | null;
}

/** The name of a port (kernel/ports.ts `Ports`). */
export type PortName = keyof Ports;

/**
 * Ports the app provides before any module: the event sink (a no-op until the events module replaces it) and
 * the webhook outbox (a no-op until the webhooks module replaces it, SPEC-3 §3).
 * Every module may `get` them; read them at call time, since a module may replace them during setup.
 */
export const KERNEL_PORTS = ['events', 'webhooks'] as const satisfies readonly PortName[];
export type KernelPortName = (typeof KERNEL_PORTS)[number];

/**
 * The ports as a module sees them: it provides what it declares in `provides`, reads with `get` what it
 * declares in `requires` (set up before it, so present), and with `find` what it declares in `uses`
 * (present or not; read at call time, since its provider may set up later or be absent).
 */
export interface ModulePorts<
  P extends PortName = PortName,
  R extends PortName = PortName,
  U extends PortName = PortName,
> {
  provide<K extends P>(name: K, impl: Ports[K]): void;
  /** A required port (or a kernel one); throws when nobody provided it. */
  get<K extends R | KernelPortName>(name: K): Ports[K];
  /** A port the module can do without. */
  find<K extends U | R>(name: K): Ports[K] | undefined;
}

/** What a module's `setup` receives. */
export interface ModuleContext<
  T extends Record<string, unknown> = Record<string, unknown>,
  O extends object = Record<string, unknown>,
  P = PortRegistry,
> {
  settings: Settings;
  authDb: Database;
  db: Database;
  cache: Cache;
  log: Logger;
  ports: P;
  /** The module's options: what it declared of the options given to `createApp`. */
  options: O;
  /** The module's own tables (its `tables` built for the configured names and the auth database's dialect). */
  tables: T;
  /** The kernel's tables of the auth schema (user, group, permission and their links, refresh token). */
  coreTables: CoreTables;
  /** Every module's tables by module name (`core` for the kernel's), e.g. for schema tools. */
  allTables: Record<string, Record<string, unknown>>;
  /** Directory of the project. */
  baseDir: string;
}

/** What a module's `setup` returns. */
export interface ModuleInstance {
  routers?: Router[];
  /** Server-rendered pages outside `/api` (kernel/page.ts). */
  pages?: PageRoute[];
  /** Called once the HTTP server exists (WebSocket upgrade). */
  onServer?(server: Server): void;
  /** Graceful shutdown, first step: before the HTTP server stops accepting and drains (close WebSockets). */
  onServerClosing?(): Promise<void> | void;
  /** Called for every finished request. Must not throw or block. */
  onRequestEnd?(record: RequestRecord): void;
  /**
   * Called for every finished request before its response is sent: the response waits for the promise it
   * returns (undefined: nothing to wait for). For what a client must be able to rely on once answered, such as
   * the activity entry of `activity_log_sync`. Must not throw.
   */
  beforeResponse?(record: RequestRecord): Promise<void> | undefined;
  /** Runs after every module is set up (every provided port exists). */
  onStartup?(): Promise<void> | void;
  /** Graceful shutdown: flush queues, close sockets. */
  onShutdown?(): Promise<void> | void;
  /**
   * This module's part of `GET /auth/user/export` (SPEC-2 section 3): top-level key to a function that
   * returns what the module stores about the user, without secrets (no digests, keys or codes).
   */
  accountExport?: Record<string, (userId: string) => Promise<unknown>>;
}

/**
 * A module as `createApp` runs it (STYLE "A feature is one folder"). Write one with {@link defineModule};
 * a plain object of this shape also works (its `ports` are the whole registry, its order the given one).
 */
export interface SvcModule {
  /** Module name; also the router name for `disable_core_routers` / `disable_routers`. */
  name: string;
  /** Tables this module owns, for the auth schema and its migrations. */
  tables?(settings: Settings, dialect: Dialect): Record<string, unknown>;
  /** Ports this module provides (modules that require them set up after it). */
  provides?: readonly PortName[];
  /** Ports that must exist when this module sets up; `createApp` refuses to start without a provider. */
  requires?: readonly PortName[];
  /** Ports this module reads when present, at call time (no order, no refusal). */
  uses?: readonly PortName[];
  /** The `createApp` options this module reads (passed as its `options`). */
  optionKeys?: readonly string[];
  setup(context: ModuleContext): ModuleInstance | Promise<ModuleInstance>;
}

/** The `createApp` options of a module: its option type `O`, and the names it reads at run time. */
export interface ModuleOptions<O extends object> {
  readonly keys: readonly (keyof O & string)[];
}

/**
 * Declares which `createApp` options a module reads; their types and JSDoc live in the interface `O`, which
 * `AppOptions` extends so a project sees them where it calls `createApp`.
 * @example
 * options: moduleOptions<MfaOptions>('mfaSender'),
 */
export function moduleOptions<O extends object>(...keys: (keyof O & string)[]): ModuleOptions<O> {
  return { keys };
}

/** What {@link defineModule} takes. */
export interface ModuleDefinition<
  T extends Record<string, unknown>,
  O extends object,
  P extends PortName,
  R extends PortName,
  U extends PortName,
> {
  /** Module name; also the router name for `disable_core_routers` / `disable_routers`. */
  name: string;
  /** The module's tables for one dialect, from the configured table names. */
  tables?(settings: Settings, dialect: Dialect): T;
  /** The `createApp` options the module reads (see {@link moduleOptions}). */
  options?: ModuleOptions<O>;
  provides?: readonly P[];
  requires?: readonly R[];
  uses?: readonly U[];
  setup(context: ModuleContext<T, O, ModulePorts<P, R, U>>): ModuleInstance | Promise<ModuleInstance>;
}

/**
 * Declares a module: its tables and options are typed in `setup`, and `provides` / `requires` / `uses` name
 * the ports it meets other modules through. `createApp` sets up a module after the providers of what it
 * requires, and refuses to start, naming the module and the port, when a required port has no provider.
 * Modeled on fastify-plugin's `dependencies`.
 * @example
 * export const notesModule = defineModule({
 *   name: 'notes',
 *   tables: (settings, dialect) => notesTables(dialect),
 *   requires: ['permissions'],
 *   setup({ tables, ports, db }) {
 *     return { routers: [createNotesRouter(db, tables.note, ports.get('permissions'))] };
 *   },
 * });
 */
export function defineModule<
  T extends Record<string, unknown> = Record<string, never>,
  O extends object = Record<string, never>,
  const P extends PortName = never,
  const R extends PortName = never,
  const U extends PortName = never,
>(definition: ModuleDefinition<T, O, P, R, U>): SvcModule {
  const { name, tables, provides, requires, uses } = definition;
  const keys = definition.options?.keys ?? [];
  return {
    name,
    ...(tables ? { tables } : {}),
    provides,
    requires,
    uses,
    optionKeys: keys,
    setup(context) {
      // createApp built `allTables[name]` with this very `tables` function and picked `optionKeys` from the
      // createApp options, whose type (AppOptions) extends O: the two narrowings below are what it guarantees.
      const own = (context.allTables[name] ?? {}) as T;
      const options = context.options as O;
      return definition.setup({ ...context, tables: own, options, ports: context.ports });
    },
  };
}

/**
 * Orders modules so that each sets up after the providers of the ports it requires (keeping the given
 * order otherwise), and refuses a required port nobody provides. Kernel ports exist before any module and
 * order nothing.
 */
export function orderModules(
  modules: readonly SvcModule[],
  kernelPorts: readonly PortName[] = KERNEL_PORTS,
): SvcModule[] {
  const providers = new Map<PortName, SvcModule[]>();
  for (const module of modules) {
    for (const port of module.provides ?? []) providers.set(port, [...(providers.get(port) ?? []), module]);
  }
  for (const module of modules) {
    for (const port of module.requires ?? []) {
      if (!providers.has(port) && !kernelPorts.includes(port)) {
        throw new Error(
          `module '${module.name}' requires the '${port}' port, which no module provides` +
            ` (modules: ${modules.map((m) => m.name).join(', ')})`,
        );
      }
    }
  }
  const ordered: SvcModule[] = [];
  const state = new Map<SvcModule, 'visiting' | 'done'>();
  const visit = (module: SvcModule, path: string[]) => {
    const seen = state.get(module);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      throw new Error(
        `modules require each other's ports in a circle: ${[...path, module.name].join(' -> ')}`,
      );
    }
    state.set(module, 'visiting');
    for (const port of module.requires ?? []) {
      if (kernelPorts.includes(port)) continue;
      for (const provider of providers.get(port) ?? []) {
        if (provider !== module) visit(provider, [...path, module.name]);
      }
    }
    state.set(module, 'done');
    ordered.push(module);
  };
  for (const module of modules) visit(module, []);
  return ordered;
}
