import type { ZodError, ZodType } from 'zod';
import { SvcError } from '../errors/svc-error.js';

/** zod issue codes to the error `type` names clients know (FastAPI-compatible where one exists). */
function issueType(issue: ZodError['issues'][number], input: unknown): string {
  if (issue.code === 'invalid_type') {
    const value = issue.path.reduce<unknown>(
      (v, key) => (v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[key as PropertyKey] : undefined),
      input,
    );
    if (value === undefined) return 'missing';
    return `${issue.expected}_type`;
  }
  return issue.code;
}

/** Parses `input` with `schema`; a failure is a 422 listing every issue with its `loc`. */
export function validate<T>(schema: ZodType<T>, input: unknown, where: 'body' | 'query' | 'path'): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors = result.error.issues.map(
    (issue) =>
      new SvcError('request.validation_error', {
        loc: [where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
        type: issueType(issue, input),
        message: issue.message,
      }),
  );
  const [first, ...rest] = errors;
  first!.extra.push(...rest);
  throw first;
}
