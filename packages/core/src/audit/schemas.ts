import { z } from 'zod';
import { UserIdQuery } from '../kernel/identity.js';
import { PaginationQuery, pageSchema } from '../kernel/pagination.js';
import { ACTIVITY_LIMIT_DEFAULT, ACTIVITY_LIMIT_MAX } from './constants.js';

/**
 * An activity entry as the audit routes return it: the fields of SPEC "Activity log entry" in camelCase
 * (SPEC conventions: request and response fields are camelCase; only the events snapshot keeps snake_case).
 */
export const ActivityOut = z.object({
  id: z.number().int(),
  timestamp: z.string().describe('ISO 8601'),
  userId: z.string().nullable(),
  username: z.string().nullable(),
  method: z.string(),
  path: z.string(),
  statusCode: z.number().int(),
  durationMs: z.number().int(),
  description: z.string().nullable(),
  impersonatorId: z
    .string()
    .nullable()
    .describe('SPEC-3 §4: the superuser who made the request as the user (impersonation); else null'),
});
export type ActivityOut = z.infer<typeof ActivityOut>;

/** `data` of `GET /admin/audit/logs` (SPEC "Pagination contract"). */
export const ActivityPage = pageSchema(ActivityOut);

/** `data` of `GET /admin/audit/activity`. */
export const ActivityList = z.array(ActivityOut);

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** An ISO 8601 date or date-time; `end` makes a date-only value mean the last millisecond of that UTC day. */
function isoTime(end: boolean) {
  return z
    .string()
    .trim()
    .refine(
      (value) =>
        DATE_ONLY.test(value) || z.iso.datetime({ offset: true, local: true }).safeParse(value).success,
      {
        message: 'expected an ISO 8601 date or date-time, for example 2025-01-31 or 2025-01-31T12:00:00Z',
      },
    )
    .transform((value) => {
      if (!DATE_ONLY.test(value)) return new Date(/[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value}Z`);
      const start = new Date(`${value}T00:00:00.000Z`);
      return end ? new Date(start.getTime() + 86_400_000 - 1) : start;
    })
    .refine((date) => !Number.isNaN(date.getTime()), { message: 'not a valid date' });
}

/** The filters of both audit routes (SPEC "Audit routes"). */
const ActivityFilterFields = {
  /** Lower-cased: ids are stored in lower case and SQLite compares text (kernel/identity.ts). */
  userId: UserIdQuery.optional(),
  /** SPEC-3 §4: entries made while this superuser impersonated someone. */
  impersonatorId: UserIdQuery.optional(),
  method: z
    .string()
    .trim()
    .max(10)
    .transform((m) => m.toUpperCase())
    .optional(),
  statusCode: z.coerce.number().int().min(100).max(599).optional(),
  /** Inclusive; a date-only value is the start of that UTC day. */
  dateFrom: isoTime(false).optional(),
  /** Inclusive; a date-only value is the end of that UTC day. */
  dateTo: isoTime(true).optional(),
  pathContains: z.string().max(500).optional(),
  /** Absent: `activity_log_exclude_paths`; empty (`excludePaths=`): no exclusion. */
  excludePaths: z.string().max(2000).optional(),
};

/**
 * Query of `GET /admin/audit/logs`: pagination plus the filters, plus `after` (keyset continuation: the id
 * of the last entry of the page before; `page` then counts from there, docs/activity-log.md "Large logs").
 */
export const ActivityLogQuery = PaginationQuery.extend({
  ...ActivityFilterFields,
  after: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
});
export type ActivityLogQuery = z.infer<typeof ActivityLogQuery>;

/** Query of `GET /admin/audit/activity`: `limit` (1 to 500, default 10) plus the filters; no pagination. */
export const RecentActivityQuery = z.object({
  limit: z.coerce.number().int().min(1).max(ACTIVITY_LIMIT_MAX).default(ACTIVITY_LIMIT_DEFAULT),
  orderBy: PaginationQuery.shape.orderBy,
  search: PaginationQuery.shape.search,
  ...ActivityFilterFields,
});
export type RecentActivityQuery = z.infer<typeof RecentActivityQuery>;
