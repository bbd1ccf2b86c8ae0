import { ERROR_CODES, isCoreErrorCode, type CoreErrorCode } from './codes.js';

export interface SvcErrorOptions {
  /** Where the problem is, e.g. `['body', 'password']`. @default the code's registry loc */
  loc?: (string | number)[];
  /** Values for the message and for clients, e.g. `{ min_length: 12 }`. */
  params?: Record<string, unknown>;
  /** Override the registry status (admin lookups answer `user.not_found` with 404). */
  status?: number;
  /** Extra response headers, e.g. `Retry-After`. */
  headers?: Record<string, string>;
  /** Message for project codes that have no catalog entry. */
  message?: string;
  /** Error `type`. @default value_error */
  type?: string;
  cause?: unknown;
}

/** An error with a stable code; the kernel turns it into the uniform error body. */
export class SvcError extends Error {
  override name = 'SvcError';
  readonly code: string;
  readonly status: number;
  readonly loc: (string | number)[];
  readonly params?: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly type: string;
  /** Further items for the `detail` array (validation errors report every field). */
  readonly extra: SvcError[] = [];

  constructor(code: CoreErrorCode | (string & {}), options: SvcErrorOptions = {}) {
    super(options.message ?? code, options.cause !== undefined ? { cause: options.cause } : undefined);
    const spec = isCoreErrorCode(code) ? ERROR_CODES[code] : undefined;
    this.code = code;
    this.status = options.status ?? spec?.status ?? 400;
    this.loc = options.loc ?? [...(spec?.loc ?? [])];
    this.params = options.params;
    this.headers = options.headers ?? {};
    this.type = options.type ?? (spec && 'type' in spec ? spec.type : undefined) ?? 'value_error';
  }
}
