import { defineRouter } from '../kernel/router.js';
import { ActivityList, ActivityLogQuery, ActivityPage, RecentActivityQuery } from './schemas.js';
import type { ActivityService } from './service.js';

const FILTERS =
  'Filters: `orderBy` (default `-timestamp`), `search` (username and path, case-insensitive), `userId`, `impersonatorId`, `method`, ' +
  '`statusCode`, `dateFrom` and `dateTo` (inclusive; ISO 8601), `pathContains`, `excludePaths` (comma-separated; ' +
  'absent: `activity_log_exclude_paths`; empty: none).';

/** `/admin/audit` routes (SPEC "Audit routes"): superuser only, mounted only with `activity_log_enabled`. */
export function createAuditRouter(service: ActivityService) {
  const audit = defineRouter({
    prefix: '/admin/audit',
    name: 'audit',
    tags: ['audit'],
    requireSuperuser: true,
  });
  audit.get(
    '/logs',
    {
      summary: 'List activity log entries',
      description:
        `Paginated, newest first by default. ${FILTERS} \`after\`: the id of the last entry of the page before ` +
        '(keyset continuation, for deep pages). `total` is exact up to 10,000 entries past the page; 10,001 ' +
        'past the page means more. On PostgreSQL a count that takes over 150 ms stops: `total` is then one ' +
        "more than the page's end after a full page (more may follow), the page's end after a short one.",
      query: ActivityLogQuery,
      response: ActivityPage,
    },
    (ctx) => service.list(ctx.query),
  );
  audit.get(
    '/activity',
    {
      summary: 'Most recent activity',
      description: `The \`limit\` (1 to 500, default 10) most recent entries as a plain list. ${FILTERS}`,
      query: RecentActivityQuery,
      response: ActivityList,
    },
    (ctx) => service.recent(ctx.query),
  );
  return audit;
}
