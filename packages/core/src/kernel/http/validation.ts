import type { ZodError, ZodType } from 'zod';
import { SvcError } from '../errors/svc-error.js';

/** zod issue codes to the error `type` names clients know (FastAPI-compatible where one exists). */
function issueType(issue: ZodError['issues'][number], input: unknown): string {
  if (issue.code === 'invalid_type') {
    const value = issue.path.reduce<unknown>(
      (v, key) =>
        v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[key as PropertyKey] : undefined,
      input,
    );
    if (value === undefined) return 'missing';
    return `${issue.expected}_type`;
  }
  return issue.code;
}

/**
 * The bound a too-small or too-large value missed, for the error's `params` (SPEC "Errors", uniform format):
 * `{min}` or `{max}` is a length for strings, a count for lists and the value for numbers and dates; an
 * exclusive bound (`gt`, `lt`) adds `inclusive: false`. A client can say "at least 3 characters" in its own
 * language without parsing the message.
 */
function boundsOf(issue: ZodError['issues'][number]): Record<string, unknown> | undefined {
  if (issue.code !== 'too_small' && issue.code !== 'too_big') return undefined;
  const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
  // JSON has no bigint; a Date bound is sent as its ISO time.
  // (zod types the bound as a number or bigint; a date schema's is a Date at run time)
  const raw: unknown = bound;
  const value = typeof bound === 'bigint' ? Number(bound) : raw instanceof Date ? raw.toISOString() : bound;
  const params: Record<string, unknown> = { [issue.code === 'too_small' ? 'min' : 'max']: value };
  if (issue.inclusive === false) params.inclusive = false;
  return params;
}

/**
 * C0 control characters other than tab, line feed and carriage return, DEL, and UTF-16 surrogates that are not
 * part of a pair. None has a use in API text: NUL cannot be stored by PostgreSQL (the same request would be
 * stored on SQLite and a 500 on PostgreSQL), a lone surrogate cannot be encoded as UTF-8 (it would be stored
 * altered), the others are terminal or log injection (SPEC "Errors"; docs/security.md "Data from clients").
 */
const FORBIDDEN_CHARACTERS =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Every string (keys included) of a parsed JSON, form or query value that holds a forbidden character. */
function forbiddenCharacterIssues(input: unknown, where: 'body' | 'query' | 'path'): SvcError[] {
  const found: SvcError[] = [];
  // Iterative: a body may nest 10,000 levels (the JSON parser accepts that), recursion could overflow.
  const stack: [unknown, (string | number)[]][] = [[input, []]];
  while (stack.length > 0 && found.length < 20) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (FORBIDDEN_CHARACTERS.test(value)) found.push(characterError([where, ...path]));
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push([item, [...path, i]]));
    } else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (FORBIDDEN_CHARACTERS.test(key)) found.push(characterError([where, ...path]));
        else stack.push([item, [...path, key]]);
      }
    }
  }
  return found;
}

function characterError(loc: (string | number)[]): SvcError {
  return new SvcError('request.validation_error', {
    loc,
    type: 'string_invalid_characters',
    message: 'Control characters and unpaired surrogates are not allowed.',
  });
}

/**
 * Parses `input` with `schema`; a failure is a 422 listing every issue with its `loc`. Strings holding control
 * characters or unpaired surrogates are refused first, whatever the schema.
 */
export function validate<T>(schema: ZodType<T>, input: unknown, where: 'body' | 'query' | 'path'): T {
  const refused = forbiddenCharacterIssues(input, where);
  if (refused.length > 0) {
    const [first, ...rest] = refused;
    first!.extra.push(...rest);
    throw first;
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors = result.error.issues.map(
    (issue) =>
      new SvcError('request.validation_error', {
        loc: [where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
        type: issueType(issue, input),
        message: issue.message,
        params: boundsOf(issue),
      }),
  );
  const [first, ...rest] = errors;
  first!.extra.push(...rest);
  throw first;
}
