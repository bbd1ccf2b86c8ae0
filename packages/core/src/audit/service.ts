import type { Settings } from '../kernel/config/schema.js';
import { pageOf, resolveOrderBy, type Page } from '../kernel/pagination.js';
import { ACCOUNT_EXPORT_ACTIVITY_LIMIT, DEFAULT_ORDER_BY, TOTAL_COUNT_BOUND } from './constants.js';
import { pathFragments } from './sanitize.js';
import type { ActivityLogQuery, ActivityOut, RecentActivityQuery } from './schemas.js';
import { isMissingTableError } from '../kernel/errors/format.js';
import { sortableActivityColumns, type ActivityFilters, type ActivityStore } from './store.js';
import type { ActivityLogTable, StoredActivity } from './tables.js';

export interface ActivityServiceDeps {
  settings: Settings;
  store: ActivityStore;
  table: ActivityLogTable;
  /** Writes queued entries first, so a reader sees requests that already finished. */
  drain(): Promise<unknown>;
  /**
   * PostgreSQL: the time budget of each bounded count of `list`, ms; past it `total` says what the page tells
   * (docs/activity-log.md "Large logs"). Absent: counts run to their bound.
   */
  countBudgetMs?: number;
}

/** An entry for the audit routes (camelCase). */
export function toActivityOut(row: StoredActivity): ActivityOut {
  return {
    id: Number(row.id),
    timestamp: new Date(row.timestamp).toISOString(),
    userId: row.userId ?? null,
    username: row.username ?? null,
    method: row.method,
    path: row.path,
    statusCode: row.statusCode,
    durationMs: row.durationMs,
    description: row.description ?? null,
    impersonatorId: row.impersonatorId ?? null,
  };
}

/** An entry as the events snapshot sends it: the stored snake_case field names (SPEC "Frame format"). */
export function toSnapshotEntry(row: StoredActivity): Record<string, unknown> {
  return {
    id: Number(row.id),
    timestamp: new Date(row.timestamp).toISOString(),
    user_id: row.userId ?? null,
    username: row.username ?? null,
    method: row.method,
    path: row.path,
    status_code: row.statusCode,
    duration_ms: row.durationMs,
    description: row.description ?? null,
    impersonator_id: row.impersonatorId ?? null,
  };
}

/** The read side of the activity log: the audit routes and the `activity` port. */
export function createActivityService(deps: ActivityServiceDeps) {
  const columns = sortableActivityColumns(deps.table);

  /** SPEC "Audit routes": `excludePaths` absent → the setting; empty → nothing excluded. */
  function filtersOf(query: Omit<RecentActivityQuery, 'limit'>): ActivityFilters {
    return {
      search: query.search,
      userId: query.userId,
      impersonatorId: query.impersonatorId,
      method: query.method || undefined,
      statusCode: query.statusCode,
      dateFrom: query.dateFrom,
      dateTo: query.dateTo,
      pathContains: query.pathContains || undefined,
      excludePaths: pathFragments(query.excludePaths ?? deps.settings.activity_log_exclude_paths),
    };
  }

  async function drainQuietly(): Promise<void> {
    // A failing write must not fail the read: what is stored is still worth showing.
    await deps.drain().catch(() => undefined);
  }

  return {
    /**
     * `GET /admin/audit/logs`: paginated, newest first by default. `after` continues after that entry (keyset);
     * `total` is exact up to {@link TOTAL_COUNT_BOUND} entries past the requested page, one more than that
     * bound when more match; on PostgreSQL a count past `countBudgetMs` leaves what the page tells: one more
     * than the entries up to the page's end after a full page (docs/activity-log.md "Large logs").
     */
    async list(query: ActivityLogQuery): Promise<Page<ActivityOut>> {
      const order = resolveOrderBy(query.orderBy, columns, DEFAULT_ORDER_BY);
      await drainQuietly();
      const offset = (query.page - 1) * query.pageSize;
      const { rows, total } = await deps.store.list({
        filters: filtersOf(query),
        orderBy: order.column,
        descending: order.descending,
        limit: query.pageSize,
        offset,
        after: query.after,
        countUpTo: Math.max(TOTAL_COUNT_BOUND, offset + query.pageSize) + 1,
        countBudgetMs: deps.countBudgetMs,
      });
      return pageOf(rows.map(toActivityOut), total, query);
    },

    /** `GET /admin/audit/activity`: the most recent `limit` entries matching the filters, as a plain list. */
    async recent(query: RecentActivityQuery): Promise<ActivityOut[]> {
      const order = resolveOrderBy(query.orderBy, columns, DEFAULT_ORDER_BY);
      await drainQuietly();
      const { rows } = await deps.store.list({
        filters: filtersOf(query),
        orderBy: order.column,
        descending: order.descending,
        limit: query.limit,
        offset: 0,
      });
      return rows.map(toActivityOut);
    },

    /** The account export's `activity`: the user's newest entries first; none when the table is missing. */
    async ofUser(userId: string): Promise<ActivityOut[]> {
      await drainQuietly();
      try {
        return (await deps.store.ofUser(userId, ACCOUNT_EXPORT_ACTIVITY_LIMIT)).map(toActivityOut);
      } catch (error) {
        if (isMissingTableError(error)) return [];
        throw error;
      }
    },

    /** The `activity` port: last `limit` entries, oldest first, snake_case; null when the table is missing. */
    async snapshot(limit: number): Promise<Record<string, unknown>[] | null> {
      await drainQuietly();
      try {
        const rows = await deps.store.latest(limit);
        return rows.reverse().map(toSnapshotEntry);
      } catch (error) {
        if (isMissingTableError(error)) return null;
        throw error;
      }
    },
  };
}

export type ActivityService = ReturnType<typeof createActivityService>;
