import { eq } from 'drizzle-orm';
import { apiBase } from '../kernel/routes.js';
import { defineModule, moduleOptions as declareOptions, type ModuleInstance } from '../kernel/module.js';
import { createLocalBus, createRedisBus, type BusMessage, type EventBus } from './bus.js';
import { EVENTS_PREFIX, MAX_BUFFERED_BYTES, PING_INTERVAL_MS } from './constants.js';
import { createEventsRouter } from './routes.js';
import { createEventService } from './service.js';
import { createEventSockets, type SocketUser } from './sockets.js';
import { eventsTables } from './tables.js';
import { createCacheTicketStore, createDatabaseTicketStore } from './tickets.js';

/** Tuning of the events module; the defaults are the SPEC values (tests shorten them). */
export interface EventsModuleOptions {
  /** User re-check and `ping` interval. @default 30000 (SPEC "Limits") */
  pingIntervalMs?: number;
  /** Unread bytes after which a client is closed with 1013. @default 1048576 */
  maxBufferedBytes?: number;
  /** Clock of tickets and event timestamps. @default () => new Date() */
  now?: () => Date;
}

/** The `createApp` options of the events module: the same tuning as {@link EventsModuleOptions}. */
export interface EventsOptions {
  /** User re-check and `ping` interval of event sockets. @default 30000 (SPEC "Limits") */
  eventsPingIntervalMs?: number;
  /** Unread bytes after which an event socket is closed with 1013. @default 1048576 */
  eventsMaxBufferedBytes?: number;
  /** Clock of tickets and event timestamps. @default () => new Date() */
  eventsNow?: () => Date;
}

/**
 * The event stream (SPEC "Events", "Event routes"): the ticket route, the WebSocket on the HTTP server's
 * upgrade, and the `events` port. Mounted only when `events_broadcast_enabled`; otherwise a handshake to the
 * path gets HTTP 403 and the port stays the app's no-op.
 * @example
 * createApp({ coreModules: coreModules.map((m) => (m.name === 'events' ? createEventsModule({ pingIntervalMs: 200 }) : m)) });
 */
export function createEventsModule(moduleOptions: EventsModuleOptions = {}) {
  return defineModule({
    name: 'events', // router name for disable_core_routers
    tables: eventsTables,
    options: declareOptions<EventsOptions>('eventsPingIntervalMs', 'eventsMaxBufferedBytes', 'eventsNow'),
    provides: ['events'],
    uses: ['authenticator', 'permissions', 'activity'],
    async setup({ settings, authDb, cache, log, ports, options: appOptions, tables, coreTables }) {
      const now = moduleOptions.now ?? appOptions.eventsNow ?? (() => new Date());
      const routerDisabled = settings.disable_core_routers.includes('events');
      const wsPath = `${apiBase(settings)}${EVENTS_PREFIX}/ws`.replace(/\/{2,}/g, '/');
      const users = coreTables.user;
      const tickets =
        settings.events_ticket_store === 'cache'
          ? createCacheTicketStore({ cache, now })
          : createDatabaseTicketStore({
              db: authDb,
              table: tables.wsTicket,
              now,
            });

      const sockets = createEventSockets({
        path: wsPath,
        enabled: settings.events_broadcast_enabled,
        settings,
        log,
        tickets,
        async loadUser(userId): Promise<SocketUser | undefined> {
          const [row] = await authDb.orm
            .select({
              id: users.id,
              isActive: users.isActive,
              isSuperuser: users.isSuperuser,
              passwordChangedAt: users.passwordChangedAt,
            })
            .from(users)
            .where(eq(users.id, userId))
            .limit(1);
          return row;
        },
        authenticator: () => ports.find('authenticator'),
        permissions: () => ports.find('permissions'),
        activity: () => ports.find('activity'),
        pingIntervalMs: moduleOptions.pingIntervalMs ?? appOptions.eventsPingIntervalMs ?? PING_INTERVAL_MS,
        maxBufferedBytes:
          moduleOptions.maxBufferedBytes ?? appOptions.eventsMaxBufferedBytes ?? MAX_BUFFERED_BYTES,
      });
      if (!settings.events_broadcast_enabled || routerDisabled) {
        // Disabled: no routes, the no-op port; the handshake still gets its HTTP answer (403, SPEC "Event routes").
        return routerDisabled ? {} : { onServer: (server) => sockets.attach(server) };
      }

      let receive: (message: BusMessage) => void = () => undefined;
      const deliver = (message: BusMessage) => receive(message);
      // SPEC "Configuration" cache_url: a shared cache server means other workers and hosts to reach.
      const bus: EventBus = settings.cache_url
        ? await createRedisBus({
            url: settings.cache_url,
            channel: `${settings.cache_prefix}events`,
            log,
            deliver,
          })
        : createLocalBus(deliver);
      const service = createEventService({ settings, now, bus, sockets });
      receive = (message) => service.receive(message);
      ports.provide('events', service);

      return {
        routers: [createEventsRouter(tickets)],
        onServer: (server) => sockets.attach(server),
        // Upgraded sockets keep the HTTP server from closing and are not cut by closeAllConnections():
        // they get 1001 before the server drains.
        onServerClosing: () => sockets.shutdown(),
        async onShutdown() {
          await sockets.shutdown();
          await bus.close();
        },
      } satisfies ModuleInstance;
    },
  });
}

/** The events module with the SPEC timings. */
export const eventsModule = createEventsModule();
