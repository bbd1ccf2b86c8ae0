import type { SvcErrorCode } from './codes.js';

/**
 * Codes the client itself gives an error that did not come in the uniform error format (SPEC "Errors"): a
 * proxy's HTML page, an empty 502, a body that is not JSON.
 */
export type ClientErrorCode = 'client.unexpected_response';

/** One item of the uniform error format (`{detail: [...]}`, SPEC "Errors"). */
export interface SvcErrorItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  code: SvcErrorCode | ClientErrorCode | (string & NonNullable<unknown>);
  params?: Record<string, unknown>;
}

/**
 * A refused request: the HTTP status and the first item of the server's uniform error format.
 * @example
 * try { await client.login('alice', 'wrong') } catch (error) {
 *   if (error instanceof SvcApiError && error.code === 'auth.invalid_credentials') showWrongPassword();
 * }
 */
export class SvcApiError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The stable code of the first error item (docs/errors.md); translate from it. */
  readonly code: SvcErrorCode | ClientErrorCode;
  /** The values the message was built from (`{min_length}`, `{permissions}`), or `{}`. */
  readonly params: Record<string, unknown>;
  /** Where the error is (`['body', 'username']`, `['header', 'Authorization']`). */
  readonly loc: (string | number)[];
  /** Every item the server sent (a validation error may name several fields). */
  readonly detail: SvcErrorItem[];
  /** `Retry-After` in seconds, when the server sent one (a locked account, a mail cooldown). */
  readonly retryAfter: number | undefined;

  constructor(status: number, detail: SvcErrorItem[], retryAfter?: number) {
    const first = detail[0] ?? {
      loc: [],
      msg: `unexpected response ${status}`,
      type: 'client_error',
      code: 'client.unexpected_response',
    };
    super(first.msg);
    this.name = 'SvcApiError';
    this.status = status;
    this.code = first.code as SvcErrorCode | ClientErrorCode;
    this.params = first.params ?? {};
    this.loc = first.loc;
    this.detail = detail;
    this.retryAfter = retryAfter;
  }
}

/** The error of a non-2xx response: the uniform format when the body has it, else `client.unexpected_response`. */
export async function apiErrorOf(response: Response): Promise<SvcApiError> {
  const text = await response.text().catch(() => '');
  const retryHeader = response.headers.get('retry-after');
  const retryAfter = retryHeader !== null && /^\d+$/.test(retryHeader) ? Number(retryHeader) : undefined;
  let detail: SvcErrorItem[] = [];
  try {
    const body = JSON.parse(text) as { detail?: unknown };
    if (Array.isArray(body.detail)) detail = body.detail as SvcErrorItem[];
  } catch {
    // not JSON: below
  }
  return new SvcApiError(response.status, detail, retryAfter);
}
