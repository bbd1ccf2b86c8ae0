import type { Server } from 'node:http';
import type { Cache } from './cache/cache.js';
import type { Settings } from './config/schema.js';
import type { Database } from './db/database.js';
import type { Dialect } from './db/tables.js';
import type { Logger } from './log/logger.js';
import type { PortRegistry } from './ports.js';
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
  /** The user the guard loaded, when it did. */
  user?: { id: string; username: string; isSuperuser: boolean } | null;
}

/** What a module's `setup` receives. */
export interface ModuleContext<O = Record<string, unknown>> {
  settings: Settings;
  authDb: Database;
  db: Database;
  cache: Cache;
  log: Logger;
  ports: PortRegistry;
  /** The options given to `createApp` (e.g. `mfaSender`, `settingsSections`). */
  options: O;
  /** Drizzle tables of the auth schema built from the configured names, by module name. */
  tables: Record<string, Record<string, unknown>>;
  /** Directory of the project. */
  baseDir: string;
}

/** What a module's `setup` returns. */
export interface ModuleInstance {
  routers?: Router[];
  /** Called once the HTTP server exists (WebSocket upgrade). */
  onServer?(server: Server): void;
  /** Graceful shutdown, first step: before the HTTP server stops accepting and drains (close WebSockets). */
  onServerClosing?(): Promise<void> | void;
  /** Called for every finished request. Must not throw or block. */
  onRequestEnd?(record: RequestRecord): void;
  onStartup?(): Promise<void> | void;
  /** Graceful shutdown: flush queues, close sockets. */
  onShutdown?(): Promise<void> | void;
}

/** A feature of the core (STYLE "A feature is one folder"). */
export interface SvcModule {
  /** Router name for `disable_core_routers`. */
  name: string;
  /** Tables this module owns, for the auth schema and its migrations. */
  tables?(settings: Settings, dialect: Dialect): Record<string, unknown>;
  setup(context: ModuleContext<any>): ModuleInstance | Promise<ModuleInstance>;
}
