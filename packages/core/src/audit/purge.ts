import type { Settings } from '../kernel/config/schema.js';
import type { Database } from '../kernel/db/database.js';
import { PURGE_BATCH_SIZE } from './constants.js';
import { createActivityStore } from './store.js';
import { auditTables } from './tables.js';

const DAY_MS = 86_400_000;

/** What {@link purgeActivityLog} does. */
export interface PurgeActivityOptions {
  /** Entries older than this many days go. */
  days: number;
  /** Only count. @default false */
  dryRun?: boolean;
  /** @default new Date() */
  now?: Date;
  /** Entries deleted per statement. @default PURGE_BATCH_SIZE */
  batchSize?: number;
  /** Called after each batch with the running total. */
  onProgress?(deleted: number, matched: number): void;
}

export interface PurgeActivityResult {
  cutoff: Date;
  /** Entries older than the cutoff when the purge started. */
  matched: number;
  deleted: number;
}

/**
 * Deletes activity log entries older than `days` days (`svc audit purge`, SPEC "Command-line interface"), in
 * batches of ids so a large table is never locked for long; a dry run only counts.
 * @example await purgeActivityLog(authDb, settings, { days: 90 })
 */
export async function purgeActivityLog(
  db: Database,
  settings: Settings,
  options: PurgeActivityOptions,
): Promise<PurgeActivityResult> {
  const { activityLog } = auditTables(settings, db.dialect);
  const store = createActivityStore(db, activityLog);
  const cutoff = new Date((options.now ?? new Date()).getTime() - options.days * DAY_MS);
  const matched = await store.countOlderThan(cutoff);
  if (options.dryRun || matched === 0) return { cutoff, matched, deleted: 0 };
  const batchSize = options.batchSize ?? PURGE_BATCH_SIZE;
  let deleted = 0;
  for (;;) {
    const removed = await store.deleteOlderThan(cutoff, batchSize);
    deleted += removed;
    if (removed > 0) options.onProgress?.(deleted, matched);
    if (removed < batchSize) break;
    // Let other work on the connection (and the event loop) in between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { cutoff, matched, deleted };
}
