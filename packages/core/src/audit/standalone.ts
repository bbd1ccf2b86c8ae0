import type { Settings } from '../kernel/config/schema.js';
import type { Database } from '../kernel/db/database.js';
import { USERNAME_MAX_LENGTH } from '../kernel/identity.js';
import type { ActivityEntry } from '../kernel/ports.js';
import { DESCRIPTION_MAX_LENGTH, PATH_MAX_LENGTH } from './constants.js';
import { sanitizeNullable, sanitizeText } from './sanitize.js';
import { activityLogTable } from './tables.js';

/**
 * The activity log's writer for a process without the app (`svc users`): the entries a command's change
 * causes (SPEC-3 §4: an impersonation ended by the superuser's demotion), sanitised as the server's
 * (SPEC "Activity log recording rules" 6) and written at once. `record` is absent while
 * `activity_log_enabled` is false, as on the server. No `activity` event: a command has no event stream.
 */
export function createStandaloneActivityLog(
  db: Database,
  settings: Settings,
): { record?(entry: ActivityEntry): Promise<void> } {
  if (!settings.activity_log_enabled) return {};
  const table = activityLogTable(settings, db.dialect);
  return {
    async record(entry) {
      await db.orm.insert(table).values({
        timestamp: new Date(),
        userId: entry.userId,
        username: sanitizeNullable(entry.username, USERNAME_MAX_LENGTH),
        method: entry.method.toUpperCase(),
        path: sanitizeText(entry.path, PATH_MAX_LENGTH),
        statusCode: entry.statusCode,
        durationMs: 0,
        description: sanitizeText(entry.description, DESCRIPTION_MAX_LENGTH),
        impersonatorId: entry.impersonatorId ?? null,
      });
    },
  };
}
