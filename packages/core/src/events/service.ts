import type { Settings } from '../kernel/config/schema.js';
import type { Audience, CoreEvents, EventSink, UserChange } from '../kernel/ports.js';
import type { BusMessage, EventBus, Target } from './bus.js';
import type { EventSockets } from './sockets.js';

/** What the event service needs. */
export interface EventServiceDeps {
  settings: Pick<Settings, 'events_public_types'>;
  /** The clock of event timestamps. */
  now: () => Date;
  /** Fan-out to every process (this one included). */
  bus: EventBus;
  /** This process's sockets (user changes are applied here at once, not only when the bus echoes them). */
  sockets: Pick<EventSockets, 'deliver' | 'userChanged' | 'sessionsEnded'>;
}

/** SPEC "Event types and audience": the default audience of each core event. */
export function coreTarget<K extends keyof CoreEvents>(type: K, data: CoreEvents[K]): Target {
  switch (type) {
    case 'user_permissions_changed':
      return { superusers: true, userIds: [(data as CoreEvents['user_permissions_changed']).userId] };
    case 'session_revoked': // SPEC-2 "Sessions": the user and superusers
      return { superusers: true, userIds: [(data as CoreEvents['session_revoked']).userId] };
    case 'organization_membership_changed': // SPEC-3 §2: the member and superusers
      return { superusers: true, userIds: [(data as CoreEvents['organization_membership_changed']).userId] };
    case 'identity_linked': // SPEC-3 section 1: the user and superusers
    case 'identity_unlinked':
      return { superusers: true, userIds: [(data as CoreEvents['identity_linked']).userId] };
    default: // login, logout, activity
      return { superusers: true };
  }
}

/** A project event's audience (`ctx.emit`). */
export function audienceTarget(audience: Audience): Target {
  switch (audience.kind) {
    case 'all':
      return { all: true };
    case 'superusers':
      return { superusers: true };
    case 'users':
      return { userIds: [...audience.userIds] };
    case 'permission':
      return { codename: audience.codename };
  }
}

/**
 * The `events` port: builds each frame once (`{type, timestamp, data}`, SPEC "Frame format"), resolves its
 * audience, and publishes it on the bus; delivery happens where the bus delivers (every process once).
 */
export function createEventService(
  deps: EventServiceDeps,
): EventSink & { receive(message: BusMessage): void } {
  const publicTypes = new Set(deps.settings.events_public_types);

  function publish(type: string, data: Record<string, unknown>, target: Target): void {
    // SPEC "Event types and audience": types in events_public_types go to every connected client.
    const resolved = publicTypes.has(type) ? { all: true } : target;
    const frame = JSON.stringify({ type, timestamp: deps.now().toISOString(), data });
    deps.bus.publish({ kind: 'event', target: resolved, frame });
  }

  function userChanged(userId: string, change: UserChange): void {
    // SPEC "WebSocket connection": close at once here, and in the other processes through the bus (closing
    // twice is a no-op when this process receives its own message back).
    deps.sockets.userChanged(userId, change);
    if (deps.bus.shared) deps.bus.publish({ kind: 'user', userId, change });
  }

  return {
    emit(type, data) {
      publish(type, data as Record<string, unknown>, coreTarget(type, data));
      // The permission audience of the user's open sockets follows the change (here and on other processes).
      if (type === 'user_permissions_changed') {
        userChanged((data as CoreEvents['user_permissions_changed']).userId, 'permissions_changed');
      }
    },
    emitCustom(type, data, audience) {
      publish(type, data, audienceTarget(audience));
    },
    userChanged,
    sessionsEnded(userId, sessionIds) {
      // SPEC-2 "Sessions": at once here, and on every other worker and host through the bus.
      deps.sockets.sessionsEnded(userId, sessionIds);
      if (deps.bus.shared) deps.bus.publish({ kind: 'sessions', userId, sessionIds });
    },
    /** A message from the bus: deliver an event, or apply another process's user change or ended sessions. */
    receive(message) {
      if (message.kind === 'event') deps.sockets.deliver(message.target, message.frame);
      else if (message.kind === 'user') deps.sockets.userChanged(message.userId, message.change);
      else if (message.kind === 'sessions') deps.sockets.sessionsEnded(message.userId, message.sessionIds);
    },
  };
}
