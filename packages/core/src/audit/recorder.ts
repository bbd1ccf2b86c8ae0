import type { Settings } from '../kernel/config/schema.js';
import { isUuid, USERNAME_MAX_LENGTH } from '../kernel/identity.js';
import type { Logger } from '../kernel/log/logger.js';
import type { RequestRecord } from '../kernel/module.js';
import type { ActivityEntry, Authenticator, EventSink, UserSettingsReader } from '../kernel/ports.js';
import { DESCRIPTION_MAX_LENGTH, OPT_OUT_SETTING, PATH_MAX_LENGTH, RECORDED_METHODS } from './constants.js';
import { pathFragments, renderLogAs, sanitizeNullable, sanitizeText } from './sanitize.js';
import type { NewActivity } from './tables.js';

/** What the recorder needs; ports are looked up per request because their modules may come later. */
export interface ActivityRecorderDeps {
  settings: Settings;
  /** Queues the entry; a promise when the response waits for it to be written (activity_log_sync). */
  enqueue(entry: NewActivity): void | Promise<void>;
  authenticator(): Authenticator | undefined;
  userSettings(): UserSettingsReader | undefined;
  events(): EventSink | undefined;
  log: Logger;
}

interface Actor {
  userId: string | null;
  username: string | null;
  /** Known only when the route guard loaded the user. */
  isSuperuser: boolean;
  /** SPEC-3 §4: the superuser impersonating the user. */
  impersonatorId?: string | null;
}

/**
 * Decides which finished requests become activity entries (SPEC "Activity log recording rules") and queues
 * them, sanitised, with their `activity` event.
 */
export function createActivityRecorder(deps: ActivityRecorderDeps) {
  const { log } = deps;
  const excluded = pathFragments(deps.settings.activity_log_exclude_paths);
  const pending = new Set<Promise<void>>();
  let warnedNoSettings = false;

  /** Rules 1, 2 and 4: write methods under `/api`, status below 500, no excluded fragment. */
  function isRecorded(record: RequestRecord): boolean {
    if (!RECORDED_METHODS.has(record.method.toUpperCase())) return false;
    if (record.path !== '/api' && !record.path.startsWith('/api/')) return false;
    if (record.status >= 500) return false;
    return !excluded.some((fragment) => record.path.includes(fragment));
  }

  /** Rule 3: the user from the bearer token, decoded without a database query; none when invalid. */
  function actorOf(record: RequestRecord): Actor {
    const anonymous: Actor = { userId: null, username: null, isSuperuser: false };
    // `bearerToken`: the bearer, or the session cookie's token when the guard read it (SPEC-3 §5).
    if (!record.bearerToken) return anonymous;
    // The guard verified this very token and loaded its user: no second verification (docs/performance.md:
    // the token's HMAC and jsonwebtoken's decoding again on every logged write).
    if (record.user) {
      return {
        userId: record.user.id,
        username: record.user.username,
        isSuperuser: record.user.isSuperuser,
        impersonatorId: record.user.impersonatorId ?? null,
      };
    }
    let claims: ReturnType<Authenticator['peek']> = null;
    try {
      claims = deps.authenticator()?.peek(record.bearerToken) ?? null;
    } catch {
      claims = null;
    }
    // User ids are UUIDs (SPEC "Activity log entry"); anything else in a token is not stored as one.
    if (!claims || !isUuid(claims.userId)) return anonymous;
    // Without the guard's user (no route matched, the guard refused) the token's user counts
    // as non-superuser.
    return { userId: claims.userId, username: claims.username ?? null, isSuperuser: false };
  }

  function store(record: RequestRecord, actor: Actor): void | Promise<void> {
    const username = sanitizeNullable(actor.username, USERNAME_MAX_LENGTH);
    const path = sanitizeText(record.path, PATH_MAX_LENGTH);
    const description =
      record.description !== undefined
        ? sanitizeText(record.description, DESCRIPTION_MAX_LENGTH)
        : record.logAs
          ? sanitizeText(renderLogAs(record.logAs, record.params ?? {}, username), DESCRIPTION_MAX_LENGTH)
          : null;
    const method = record.method.toUpperCase();
    const written = deps.enqueue({
      timestamp: record.timestamp,
      userId: actor.userId,
      username,
      method,
      path,
      statusCode: record.status,
      durationMs: Math.max(0, Math.round(record.durationMs)),
      description,
      impersonatorId: actor.impersonatorId ?? null,
    });
    try {
      deps.events()?.emit('activity', {
        userId: actor.userId,
        username,
        method,
        path,
        statusCode: record.status,
        description,
      });
    } catch (error) {
      log.warn('activity event could not be emitted', { exc: error });
    }
    return written;
  }

  /** Rule 5: a superuser's opt-out, read through the settings port (which caches it 30 seconds). */
  async function storeUnlessOptedOut(record: RequestRecord, actor: Actor): Promise<void> {
    const reader = deps.userSettings();
    if (!reader) {
      if (!warnedNoSettings) {
        log.warn(
          'activity log: user settings are not available, superusers are recorded without the opt-out check',
        );
        warnedNoSettings = true;
      }
    } else {
      try {
        if ((await reader.get(actor.userId!, OPT_OUT_SETTING)) === true) return;
      } catch (error) {
        log.warn('activity log: reading the opt-out setting failed, recording the request', { exc: error });
      }
    }
    await store(record, actor);
  }

  return {
    /** The kernel hook: never throws, never waits (only a superuser's opt-out check is asynchronous). */
    onRequestEnd(record: RequestRecord): void {
      try {
        if (!isRecorded(record)) return;
        const actor = actorOf(record);
        if (!actor.isSuperuser) {
          store(record, actor);
          return;
        }
        const task = storeUnlessOptedOut(record, actor)
          .catch((error) => log.error('activity log: recording failed', { exc: error }))
          .finally(() => pending.delete(task));
        pending.add(task);
      } catch (error) {
        log.error('activity log: recording failed', { exc: error });
      }
    },

    /**
     * `activity_log_sync`: the same decision as {@link onRequestEnd}, made before the response is sent;
     * resolves once the entry is written (undefined when the request is not recorded). Never rejects.
     */
    beforeResponse(record: RequestRecord): Promise<void> | undefined {
      try {
        if (!isRecorded(record)) return undefined;
        const actor = actorOf(record);
        const written = actor.isSuperuser ? storeUnlessOptedOut(record, actor) : store(record, actor);
        return written?.catch((error: unknown) =>
          log.error('activity log: recording failed', { exc: error }),
        );
      } catch (error) {
        log.error('activity log: recording failed', { exc: error });
        return undefined;
      }
    },

    /**
     * An entry no request records itself (kernel/ports.ts `ActivityEntry`): sanitised and queued like a
     * request's, with its `activity` event. Never rejects.
     */
    async record(entry: ActivityEntry): Promise<void> {
      const username = sanitizeNullable(entry.username, USERNAME_MAX_LENGTH);
      const path = sanitizeText(entry.path, PATH_MAX_LENGTH);
      const description = sanitizeText(entry.description, DESCRIPTION_MAX_LENGTH);
      const method = entry.method.toUpperCase();
      try {
        await deps.enqueue({
          timestamp: new Date(),
          userId: entry.userId,
          username,
          method,
          path,
          statusCode: entry.statusCode,
          durationMs: 0,
          description,
          impersonatorId: entry.impersonatorId ?? null,
        });
        deps.events()?.emit('activity', {
          userId: entry.userId,
          username,
          method,
          path,
          statusCode: entry.statusCode,
          description,
        });
      } catch (error) {
        log.error('activity log: recording failed', { exc: error });
      }
    },

    /** Waits for opt-out checks in progress (before the final flush). */
    async settle(): Promise<void> {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}

export type ActivityRecorder = ReturnType<typeof createActivityRecorder>;
