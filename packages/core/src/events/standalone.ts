import type { Settings } from '../kernel/config/schema.js';
import type { Logger } from '../kernel/log/logger.js';
import type { EventSink } from '../kernel/ports.js';
import { createRedisBus } from './bus.js';
import { createEventService } from './service.js';

/**
 * Events from a process without the app (`svc users update`): with a shared cache (`cache_url`, Redis) and
 * `events_broadcast_enabled`, a frame published on the bus reaches the sockets of every running host, as an
 * event of a host does (SPEC-3 §4: `impersonation_ended` when a command demotes a superuser). Undefined
 * otherwise: with the in-process cache there is no channel a command could reach the hosts' sockets on.
 */
export async function createStandaloneEventSink(
  settings: Settings,
  log: Logger,
): Promise<(EventSink & { close(): Promise<void> }) | undefined> {
  if (!settings.events_broadcast_enabled || !settings.cache_url) return undefined;
  const bus = await createRedisBus({
    url: settings.cache_url,
    channel: `${settings.cache_prefix}events`,
    log,
    deliver: () => undefined, // this process has no sockets
  });
  const nothingHere = { deliver() {}, userChanged() {}, sessionsEnded() {} };
  const service = createEventService({ settings, now: () => new Date(), bus, sockets: nothingHere });
  return {
    emit: service.emit,
    emitCustom: service.emitCustom,
    userChanged: service.userChanged,
    sessionsEnded: service.sessionsEnded,
    close: () => bus.close(),
  };
}
