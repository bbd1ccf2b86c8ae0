import { z } from 'zod';
import { SvcError } from './errors/svc-error.js';

/** SPEC "Pagination contract". */
export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 200;

/** Query schema of a paginated list: `page`, `pageSize`, `orderBy`, `search`. */
export const PaginationQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  pageSize: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  orderBy: z.string().max(100).optional(),
  search: z.string().max(200).optional(),
});
export type PaginationQuery = z.infer<typeof PaginationQuery>;

/** The `data` of a paginated response. */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
  pages: number;
}

export function pageOf<T>(
  items: T[],
  total: number,
  query: Pick<PaginationQuery, 'page' | 'pageSize'>,
): Page<T> {
  return {
    items,
    total,
    page: query.page,
    pageSize: query.pageSize,
    pages: total === 0 ? 0 : Math.ceil(total / query.pageSize),
  };
}

/** zod schema of a `Page` of `item`, for responses and OpenAPI. */
export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    total: z.number().int(),
    page: z.number().int(),
    pageSize: z.number().int(),
    pages: z.number().int(),
  });
}

/**
 * Resolves `orderBy` (`field` or `-field`, camelCase or snake_case) against a whitelist of sortable fields;
 * anything else is a 422 naming the allowed fields, so no input reaches SQL.
 */
export function resolveOrderBy<C>(
  orderBy: string | undefined,
  allowed: Record<string, C>,
  fallback: string,
): { column: C; descending: boolean } {
  const raw = (orderBy ?? fallback).trim();
  const descending = raw.startsWith('-');
  const name = raw.replace(/^[-+]/, '');
  const camel = name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  const column = Object.hasOwn(allowed, camel) ? allowed[camel] : undefined;
  if (column === undefined) {
    throw new SvcError('request.validation_error', {
      loc: ['query', 'orderBy'],
      params: { allowed: Object.keys(allowed) },
      message: `orderBy must be one of ${Object.keys(allowed).join(', ')} (prefix - for descending)`,
    });
  }
  return { column, descending };
}

/** `%text%` for LIKE with `%`, `_` and `\` escaped (use with `ESCAPE '\'`). */
export function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
