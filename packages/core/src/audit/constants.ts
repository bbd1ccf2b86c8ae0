/** SPEC "Limits": activity log field lengths (path and description 500; the username's is the user's, kernel/identity.ts). */
export const PATH_MAX_LENGTH = 500;
export const DESCRIPTION_MAX_LENGTH = 500;

/** SPEC "Limits": `/admin/audit/activity` limit 1 to 500, default 10. */
export const ACTIVITY_LIMIT_DEFAULT = 10;
export const ACTIVITY_LIMIT_MAX = 500;

/** SPEC-2 "Administration and self-service": the account export carries the newest 1,000 entries. */
export const ACCOUNT_EXPORT_ACTIVITY_LIMIT = 1_000;

/** SPEC "Audit routes": `orderBy` default. */
export const DEFAULT_ORDER_BY = '-timestamp';

/** SPEC "Activity log recording rules" 1: the recorded methods. */
export const RECORDED_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** SPEC "Activity log recording rules" 5: the user setting of the opt-out. */
export const OPT_OUT_SETTING = 'audit.disableActivityLog';

/** Write-behind: a batch is written every this many milliseconds… */
export const FLUSH_INTERVAL_MS = 200;
/**
 * …or as soon as this many entries wait (one multi-row INSERT each; far below both dialects' parameter caps).
 * On the file database a batch is one transaction on the event loop (about 15 us an entry under load: seven
 * indexes and the text index's terms), so 100 entries hold it 1 to 2 ms where 500 would hold it 5 to 10.
 */
export const FLUSH_BATCH_SIZE = 100;
/** Entries kept in memory while the database fails; beyond this the oldest are dropped and counted. */
export const MAX_QUEUED_ENTRIES = 100_000;
/** Back-off of a failing database: first retry after this, doubling up to the maximum. */
export const RETRY_BASE_MS = 500;
export const RETRY_MAX_MS = 30_000;
/** Shutdown gives a failing database this many more attempts before it drops what is left. */
export const SHUTDOWN_FLUSH_ATTEMPTS = 3;

/** `svc audit purge`: ids deleted per statement, so a large table is never locked for long. */
export const PURGE_BATCH_SIZE = 5_000;

/**
 * `total` of `GET /admin/audit/logs` is counted up to this many entries past the requested page
 * (docs/activity-log.md "Large logs"): one more than that means "more than this".
 */
export const TOTAL_COUNT_BOUND = 10_000;

/**
 * PostgreSQL: each bounded count of `GET /admin/audit/logs` runs under a statement timeout of this many
 * milliseconds; past it, `total` says only what the page tells (docs/activity-log.md "Large logs": one more
 * than the entries up to the page's end when the page is full). A count that finds few matches in a large log
 * walks many rows (up to seconds at ten million entries) where the page itself takes milliseconds; the
 * budget keeps every list call within the console's 300 ms (docs/performance.md).
 */
export const COUNT_BUDGET_MS = 150;
