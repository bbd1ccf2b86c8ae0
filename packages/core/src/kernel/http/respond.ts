import type { Request, Response } from 'express';
import { errorBody } from '../errors/format.js';
import type { SvcError } from '../errors/svc-error.js';
import type { Translate } from '../i18n/index.js';

const PROXY_HEADERS = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'forwarded', 'x-real-ip'];
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** A request from this machine that did not pass through a proxy (SPEC `swagger_noauth`). */
export function isLocalDirect(req: Request): boolean {
  return LOOPBACK.has(req.socket.remoteAddress ?? '') && !PROXY_HEADERS.some((h) => h in req.headers);
}

/** Writes the uniform error response. */
export function sendError(res: Response, error: SvcError, t: Translate): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  if (error.status === 401 && !res.hasHeader('WWW-Authenticate')) res.setHeader('WWW-Authenticate', 'Bearer');
  res.status(error.status).json(errorBody(error, t));
}
