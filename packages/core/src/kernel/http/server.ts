import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { isUtf8 } from 'node:buffer';
import { isIP, Socket } from 'node:net';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import type { Settings } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { mapDatabaseError } from '../errors/format.js';
import { SvcError } from '../errors/svc-error.js';
import { negotiateLocale, resolveLocale, translator } from '../i18n/index.js';
import { isValidRequestId, requestContext } from '../log/context.js';
import type { Logger } from '../log/logger.js';
import type { RequestRecord } from '../module.js';
import {
  PERSONAL_TOKEN_PREFIX,
  type Audience,
  type AuthUser,
  type OrganizationContext,
  type PortRegistry,
  isPersonalTokenUser,
} from '../ports.js';
import type { HandlerContext, HandlerSettings } from '../router.js';
import { apiBase, compileRoutes, type CompiledRoute, type MountedRouter } from '../routes.js';
import type { Cache } from '../cache/cache.js';
import { envelope, shouldEnvelope } from './envelope.js';
import { bearerToken, guard, needsUser, type GuardInput } from './guard.js';
import {
  CSRF_FORM_FIELD,
  cookieNames,
  csrfCookieHeader,
  newCsrfToken,
  passesDoubleSubmit,
  isTrustedOrigin,
  isUnsafeMethod,
  passesCsrf,
  readCookie,
  type SiteHeaders,
} from '../browser-session.js';
import { escapeHtml } from '../html.js';
import { PAGE_CSP, type PageRequest, type PageResponse, type PageRoute } from '../page.js';
import { validate } from './validation.js';
import { mountDocs, type DocsOptions } from './docs.js';
import { mountStaticFiles } from './static-files.js';
import { mountAdminConsole } from './admin-console.js';
import { adminConsoleDir } from '../admin-console.js';
import { loggedUrl } from './logged-url.js';
import type { ResolvedStaticFiles } from '../static-files.js';
import { isLocalDirect, sendError } from './respond.js';

export { isLocalDirect, sendError };
// Route compilation lives in kernel/routes.ts (no Express); re-exported for the importers of this file.
export { apiBase, compileRoutes, type CompiledRoute, type MountedRouter } from '../routes.js';

/** Express `trust proxy`: which peers may set the client address with X-Forwarded-For. */
export type TrustProxy = boolean | string | string[];

export interface HttpAppOptions {
  settings: Settings;
  log: Logger;
  ports: PortRegistry;
  routers: MountedRouter[];
  onRequestEnd: ((record: RequestRecord) => void)[];
  /** Hooks the response waits for (ModuleInstance.beforeResponse). @default [] */
  beforeResponse?: ((record: RequestRecord) => Promise<void> | undefined)[];
  db: Database;
  authDb: Database;
  cache: Cache;
  handlerSettings: HandlerSettings;
  emit(type: string, data: Record<string, unknown>, audience?: Audience): void;
  /** Express `trust proxy` value (`--proxy-headers` and `--forwarded-allow-ips`). @default 'loopback' */
  trustProxy?: TrustProxy;
  docs: Omit<DocsOptions, 'routes' | 'settings'>;
  /** Largest accepted request body. @default '1mb' */
  bodyLimit?: string;
  /** Server-rendered pages of the modules, outside `/api`. @default [] */
  pages?: PageRoute[];
  /** The project's static folders (kernel/static-files.ts), served after every route and the docs. @default [] */
  staticFiles?: ResolvedStaticFiles[];
  /** SPEC-3 §6: the folder of the built admin console. @default the package's `dist/console/` */
  adminConsoleDir?: string;
}

function localeOf(req: Request, settings: Settings): string {
  return settings.use_accept_language
    ? negotiateLocale(req.headers['accept-language'], settings.default_locale)
    : resolveLocale(settings.default_locale);
}

const bodyParserErrors: Record<string, () => SvcError> = {
  'entity.parse.failed': () => new SvcError('request.invalid_json'),
  'entity.too.large': () => new SvcError('request.body_too_large'),
  'entity.verify.failed': () => new SvcError('request.invalid_json'),
  'encoding.unsupported': () =>
    new SvcError('request.unsupported_media_type', { loc: ['header', 'Content-Encoding'] }),
  'charset.unsupported': () => new SvcError('request.unsupported_media_type'),
  'request.aborted': () => new SvcError('request.invalid_json'),
  'request.size.invalid': () => new SvcError('request.invalid_json'),
  'parameters.too.many': () => new SvcError('request.body_too_large'),
  'entity.too.deep': () => new SvcError('request.json_too_deep', { params: { max_depth: MAX_JSON_DEPTH } }),
};

/**
 * A body parser whose decoding failures are the client's: body-parser inflates gzip, deflate and br bodies and
 * hands on zlib's own error (no `type`) when the bytes do not decode, which would become a 500 with a stack
 * in the log. SPEC "Errors": a client mistake is a 4xx with a stable code.
 */
function decodingErrorsAsClientErrors(
  parser: (req: Request, res: Response, next: (error?: unknown) => void) => void,
) {
  return (req: Request, res: Response, next: NextFunction) => {
    parser(req, res, (error?: unknown) => {
      if (!error) return next();
      const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
      const undecodable = encoding !== 'identity' && (error as { type?: unknown }).type === undefined;
      next(undecodable ? new SvcError('request.invalid_encoding') : error);
    });
  };
}

/** Deepest JSON nesting a request body may have: legitimate bodies are shallow, deep ones only cost CPU. */
export const MAX_JSON_DEPTH = 64;

/**
 * Refuses JSON bodies nested deeper than {@link MAX_JSON_DEPTH} before JSON.parse runs, in one pass over the
 * bytes (brackets inside strings do not count). Thrown from body-parser's `verify`, it keeps its `type`.
 */
function checkJsonDepth(buffer: Buffer): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buffer.length; i++) {
    const byte = buffer[i]!;
    if (inString) {
      if (byte === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) {
        throw Object.assign(new Error('JSON nested too deeply'), { type: 'entity.too.deep' });
      }
    } else if (byte === 0x5d || byte === 0x7d) depth--;
  }
}

/** Any thrown value → SvcError; unexpected ones are logged with the request id and become `server.error`. */
export function toSvcError(error: unknown, log: Logger, debug: boolean): SvcError {
  if (error instanceof SvcError) return error;
  // Express decodes path parameters with decodeURIComponent: a bad escape (`%FF`, `%E0%A4%A`) is the client's
  // fault, not a 500 (SPEC "Errors").
  if (error instanceof URIError) {
    return new SvcError('request.validation_error', {
      loc: ['path'],
      type: 'value_error',
      message: 'The path is not valid percent-encoded UTF-8.',
    });
  }
  const type = (error as { type?: unknown })?.type;
  if (typeof type === 'string' && bodyParserErrors[type]) return bodyParserErrors[type]();
  const mapped = mapDatabaseError(error);
  if (mapped) {
    if (mapped.code === 'db.unavailable') log.error('database unavailable', { exc: error });
    return mapped;
  }
  log.error('unhandled error', { exc: error });
  return new SvcError('server.error', {
    ...(debug && error instanceof Error ? { params: { traceback: error.stack ?? String(error) } } : {}),
  });
}

/** A response that is never sent and remembers the headers set on it, with their names as written. */
class HeaderCapture extends ServerResponse {
  readonly captured = new Map<string, string>();
  override setHeader(name: string, value: string | number | readonly string[]): this {
    this.captured.set(name, String(value));
    return super.setHeader(name, value);
  }
  override removeHeader(name: string): void {
    this.captured.delete(name);
    super.removeHeader(name);
  }
}

/**
 * The headers a middleware that sets only fixed headers (helmet with static directives) sets, captured by
 * running it once on a response that is never sent.
 */
function staticHeadersOf(
  middleware: (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void,
): [string, string][] {
  const req = new IncomingMessage(new Socket());
  const res = new HeaderCapture(req);
  let called = false;
  middleware(req, res, (error) => {
    if (error) throw error;
    called = true;
  });
  if (!called) throw new Error('security headers middleware did not complete synchronously');
  return [...res.captured];
}

/** The API's Express application, its compiled routes, and the one setter of its `trust proxy`. */
export interface HttpApp {
  app: express.Express;
  /** The app as Node's request listener, for `http.createServer` (the only view of it outside kernel/http). */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  routes: CompiledRoute[];
  /** Sets `trust proxy` (`svc serve --proxy-headers`, `--forwarded-allow-ips`), e.g. when the app starts listening. */
  setTrustProxy(value: TrustProxy): void;
}

/** Builds the Express application of the API: the only place that speaks Express. */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const { settings, log, ports } = options;
  const accessLog = log.child('access');
  // Compiled once, here: the docs and rbac's applications listing read this same table (the `routes` port).
  const routes = compileRoutes(options.routers, settings);
  ports.provide('routes', { routes });
  const app = express();
  const setTrustProxy = (value: TrustProxy) => {
    app.set('trust proxy', value);
  };
  app.disable('x-powered-by');
  setTrustProxy(options.trustProxy ?? 'loopback');
  app.set('etag', false);

  const pagePaths = new Set((options.pages ?? []).map((page) => page.path));
  // The level is fixed for the process (SPEC "Configuration": `log_level`); a logger without `enabled` logs all.
  const accessLogged = accessLog.enabled?.('info') ?? true;

  // helmet's headers do not depend on the request: computed once here, set in one step per request
  // (docs/performance.md: helmet runs 13 middlewares per request otherwise).
  const securityHeaders = staticHeadersOf(
    helmet({
      contentSecurityPolicy: {
        directives: { 'img-src': ["'self'", 'data:', 'https://validator.swagger.io'] },
      },
      crossOriginResourcePolicy: { policy: 'cross-origin' },
    }),
  );

  /**
   * CORS: bearer tokens need no cookies, so any origin may call; Retry-After must be readable (SPEC
   * "Authentication" 7). With cookie sessions (SPEC-3 §5), a trusted origin is answered by name with
   * credentials allowed, so a frontend on another trusted origin sends the cookies (docs/browser-sessions.md);
   * the CSRF rules still guard every unsafe request. Returns whether it answered the request (a preflight).
   */
  const cors = (req: Request, res: Response): boolean => {
    const origin = req.headers.origin;
    if (origin) {
      if (settings.cookie_sessions_enabled && isTrustedOrigin(origin, settings, req.headers.host)) {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Allow-Credentials', 'true');
      } else {
        res.setHeader('Access-Control-Allow-Origin', '*');
      }
      if (settings.cookie_sessions_enabled) res.setHeader('Vary', 'Origin');
      res.setHeader('Access-Control-Expose-Headers', 'Retry-After, X-Request-ID, WWW-Authenticate');
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
        res.setHeader(
          'Access-Control-Allow-Headers',
          req.headers['access-control-request-headers'] ?? 'Authorization, Content-Type',
        );
        res.setHeader('Access-Control-Max-Age', '600');
        res.status(204).end();
        return true;
      }
    }
    return false;
  };

  const limit = options.bodyLimit ?? '1mb';
  // Bodies must be valid UTF-8: the parsers would turn bad bytes into U+FFFD and store an altered text
  // (SPEC "Errors"); a failed check is 'entity.verify.failed', a 400 request.invalid_json.
  const verify = (_req: unknown, _res: unknown, buf: Buffer) => {
    if (!isUtf8(buf)) throw new Error('request body is not valid UTF-8');
  };
  const jsonBody = decodingErrorsAsClientErrors(
    express.json({
      limit,
      type: ['application/json', 'application/*+json'],
      verify: (req: unknown, res: unknown, buf: Buffer) => {
        verify(req, res, buf);
        checkJsonDepth(buf);
      },
    }),
  );
  const formBody = decodingErrorsAsClientErrors(
    express.urlencoded({ extended: false, limit, parameterLimit: 100, verify }),
  );

  /**
   * What every request passes before its route, after the request id: the security headers, CORS and the body
   * parsers, in one router layer instead of four (each layer costs every request; docs/performance.md). The
   * parsers run only for a request with a body: a GET goes on at once (they would skip it too, after their
   * own setup).
   */
  const beforeRoute = (req: Request, res: Response, next: NextFunction): void => {
    for (const [name, value] of securityHeaders) res.setHeader(name, value);
    if (cors(req, res)) return;
    if (!hasBody(req)) return next();
    jsonBody(req, res, (error) => (error ? next(error) : formBody(req, res, next)));
  };

  // Request id and access log first, so every later line carries the id; then beforeRoute, in the request's
  // context.
  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    const incoming = req.headers['x-request-id'];
    const requestId = settings.request_id_enabled
      ? isValidRequestId(incoming)
        ? incoming
        : randomUUID()
      : '-';
    if (settings.request_id_enabled) res.setHeader('X-Request-ID', requestId);
    res.locals.requestId = requestId;
    const recordOf = (durationMs: number): RequestRecord => ({
      method: req.method,
      path: req.originalUrl.split('?')[0]!,
      status: res.statusCode,
      durationMs: Math.round(durationMs),
      timestamp: new Date(Date.now() - durationMs),
      // SPEC-3 §5: a cookie request's token is its session cookie's (the activity log's actor).
      bearerToken: bearerToken(req.headers.authorization) ?? res.locals.cookieToken ?? null,
      logAs: res.locals.logAs,
      params: res.locals.params,
      description: res.locals.description,
      user: res.locals.user
        ? {
            id: res.locals.user.id,
            username: res.locals.user.username,
            isSuperuser: res.locals.user.isSuperuser,
            ...(res.locals.user.impersonatorId ? { impersonatorId: res.locals.user.impersonatorId } : {}),
          }
        : res.locals.user === null
          ? null
          : undefined,
    });
    const elapsedMs = () => Number(process.hrtime.bigint() - started) / 1e6;
    const waitFor = options.beforeResponse ?? [];
    if (waitFor.length > 0) {
      // The answer is complete when `end` is called (status, headers and body set): hold it there until the
      // hooks are done, e.g. the activity entry committed (activity_log_sync, docs/activity-log.md).
      const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
      let held = false;
      res.end = ((...args: unknown[]) => {
        if (held) return end(...args);
        held = true;
        const record = recordOf(elapsedMs());
        const pending: Promise<void>[] = [];
        for (const hook of waitFor) {
          try {
            const done = hook(record);
            if (done)
              pending.push(done.catch((error: unknown) => log.error('request hook failed', { exc: error })));
          } catch (error) {
            log.error('request hook failed', { exc: error });
          }
        }
        if (pending.length === 0) return end(...args);
        void Promise.all(pending).finally(() => end(...args));
        return res;
      }) as typeof res.end;
    }
    res.on('finish', () => {
      const durationMs = elapsedMs();
      // Below INFO (e.g. the usual WARNING) the line is not built at all (docs/performance.md).
      if (accessLogged) {
        requestContext.run({ requestId }, () => {
          // SPEC-3 §7 rule 7 and SPEC-2 "Built-in account pages": no token of a URL reaches the log.
          const shown = loggedUrl(req.originalUrl, pagePaths);
          accessLog.info(`${req.method} ${shown} ${res.statusCode} ${durationMs.toFixed(1)}ms`);
        });
      }
      if (options.onRequestEnd.length === 0) return;
      const record = recordOf(durationMs);
      for (const hook of options.onRequestEnd) {
        try {
          hook(record);
        } catch (error) {
          log.error('request hook failed', { exc: error });
        }
      }
    });
    const client = () => ({ ip: clientAddress(req), userAgent: req.headers['user-agent'] ?? '' });
    // The activity log's form of the request (recordOf above): the path without its query string.
    const route = () => ({ method: req.method, path: req.originalUrl.split('?')[0]! });
    requestContext.run({ requestId, client, route }, beforeRoute, req, res, next);
  });

  for (const compiled of routes) {
    const method = compiled.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    app[method](compiled.path, (req, res, next) => {
      handle(compiled, req, res).catch(next);
    });
  }

  for (const page of options.pages ?? []) mountPage(app, page, settings, ports);

  mountDocs(app, { ...options.docs, routes, settings });
  // SPEC-3 §6: the admin console at /admin/, before the project's static files (a mount there cannot hide it).
  if (settings.admin_console_enabled)
    mountAdminConsole(app, options.adminConsoleDir ?? adminConsoleDir(), log, {
      session: settings.cookie_sessions_enabled ? 'cookie' : 'bearer',
      apiBase: apiBase(settings),
    });
  // Last: a file never shadows a route, a page or the docs.
  mountStaticFiles(app, options.staticFiles ?? [], log);
  // Browsers ask every origin for /favicon.ico (on /docs, the account pages, a served frontend): svc has no icon
  // of its own, so it says so with 204 No Content, cached a day, instead of a 404 each page view logs as an
  // error. A frontend names its own icon with <link rel="icon">.
  app.get('/favicon.ico', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=86400');
    res.status(204).end();
  });

  app.use((req, res) => {
    sendError(res, new SvcError('request.not_found', { loc: ['path'] }), translator(localeOf(req, settings)));
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const svcError = toSvcError(error, log, settings.debug);
    sendError(res, svcError, translator(localeOf(req, settings)));
  });

  // One 'handler' logger for every request, not a child built per request.
  const handlerLog = log.child('handler');

  /** One value of a request header (the first of repeated ones). */
  function headerValue(value: string | string[] | undefined): string | undefined {
    return Array.isArray(value) ? value[0] : value;
  }

  async function handle(compiled: CompiledRoute, req: Request, res: Response): Promise<void> {
    const { route } = compiled;
    const opts = route.options;
    res.locals.logAs = opts.logAs;
    res.locals.params = { ...req.params };
    const clientIp = clientAddress(req);
    const cookie = sessionCookieOf(req, settings);
    res.locals.cookieToken = cookie?.token;
    let organization: OrganizationContext | null = null;
    const user = await guard({
      requirements: compiled.requirements,
      authorization: req.headers.authorization,
      // SPEC-3 §5: the session cookie counts only without an Authorization header (a bearer header wins).
      cookie,
      localDirect: isLocalDirect(req),
      clientIp,
      settings,
      ports,
      onUser: (known) => (res.locals.user = known),
      // SPEC-3 §2: the path parameter `orgId` (`org_id` on the core's routes), else the header.
      organizationId: compiled.requirements.organization
        ? headerValue(req.params.orgId ?? req.params.org_id ?? req.headers['x-organization-id'])
        : undefined,
      onOrganization: (known) => (organization = known),
    });
    res.locals.user = user;
    if (
      opts.personalTokenRefusedFields &&
      isPersonalTokenUser(user) &&
      namesAny(req.body, opts.personalTokenRefusedFields)
    )
      throw new SvcError('access.token_not_allowed');
    const params = opts.params ? validate(opts.params, { ...req.params }, 'path') : { ...req.params };
    const query = opts.query ? validate(opts.query, { ...(req.query as object) }, 'query') : req.query;
    const body = opts.body ? validate(opts.body, req.body ?? {}, 'body') : req.body;
    const locale = localeOf(req, settings);
    let status = opts.status ?? 200;
    let envelopePolicy = opts.envelope;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- one context for every route; validate() checked the inputs above
    const ctx: HandlerContext<any, any, any> = {
      params,
      query,
      body,
      user,
      caller: user,
      organization,
      db: options.db,
      authDb: options.authDb,
      cache: options.cache,
      settings: options.handlerSettings,
      log: handlerLog,
      requestId: res.locals.requestId as string,
      clientIp,
      headers: req.headers as Record<string, string | undefined>,
      path: req.path,
      method: compiled.method,
      locale,
      t: translator(locale),
      emit: options.emit,
      setHeader: (name, value) => res.setHeader(name, value),
      setStatus: (s) => {
        status = s;
      },
      describeActivity: (description) => {
        res.locals.description = description;
      },
      setEnvelope: (policy) => {
        envelopePolicy = policy;
      },
    };
    if (user === null && compiled.core && needsUser(compiled.requirements)) {
      // Only with global_noauth: a core route that acts for its user answers 401 instead of failing on null.
      // Project routes keep the null SPEC "Configuration" gives them (global_noauth disables authentication).
      Object.defineProperty(ctx, 'user', { get: noUser });
    }
    const result = await route.handler(ctx);
    if (res.headersSent) return;
    // 204 never has a body; 202 has none when the handler returns nothing (SPEC-2 "Password reset": "202, no body").
    // A redirect (3xx) whose handler returns nothing has no body either (SPEC-3 section 1: the OAuth redirects).
    if (status === 204 || ((status === 202 || (status >= 300 && status < 400)) && result === undefined)) {
      res.status(status).end();
      return;
    }
    const payload = shouldEnvelope({ envelope: envelopePolicy }, settings)
      ? envelope(result, settings, options.db.name)
      : (result ?? null);
    sendJson(req, res.status(status), payload);
  }

  return { app, handler: app, routes, setTrustProxy };
}

/** Mounts one built-in page with the headers of kernel/page.ts. */
function mountPage(app: Express, page: PageRoute, settings: Settings, ports: PortRegistry): void {
  const answer = (
    req: Request,
    res: Response,
    produce: (r: PageRequest) => PageResponse | Promise<PageResponse>,
  ) => {
    const first = (source: unknown): Record<string, string> =>
      Object.fromEntries(
        Object.entries((source ?? {}) as Record<string, unknown>).map(([key, value]) => [
          key,
          String(Array.isArray(value) ? value[0] : (value ?? '')),
        ]),
      );
    const request: PageRequest = {
      query: first(req.query),
      form: req.method === 'POST' && req.is('application/x-www-form-urlencoded') ? first(req.body) : {},
      locale: negotiateLocale(req.headers['accept-language'], settings.default_locale),
      clientIp: clientAddress(req),
    };
    if (settings.cookie_sessions_enabled) {
      // SPEC-3 §5: the pages run no script, so their forms carry the CSRF token in the field `csrfToken`. A
      // submit from a browser holding the CSRF cookie must send it back (double submit; the Origin of these
      // pages is `null` under their no-referrer policy, so the token is the proof). A browser without the
      // cookie has no cookie session to misuse: the link's token alone acts, as without cookie sessions.
      const held = readCookie(req.headers.cookie, cookieNames(settings).csrf);
      if (
        req.method === 'POST' &&
        held !== undefined &&
        !passesDoubleSubmit(held, request.form[CSRF_FORM_FIELD])
      ) {
        const message = translator(request.locale)('auth.csrf_failed');
        res.setHeader('Cache-Control', 'no-store');
        res.setHeader('Content-Security-Policy', PAGE_CSP);
        res
          .status(403)
          .type('html')
          .send(`<!doctype html><title>403</title><p role="alert">${escapeHtml(message)}</p>`);
        return Promise.resolve();
      }
      request.csrfToken = held ?? newCsrfToken();
      if (held === undefined) res.setHeader('Set-Cookie', csrfCookieHeader(settings, request.csrfToken));
      // SPEC-3 §2 and §5: a page may act for the browser's cookie session (the join page accepts for it). As
      // for the guard, the cookie counts only without an Authorization header and is never a personal token;
      // a submit sees it only after the double submit above passed (a browser without the CSRF cookie has
      // proved nothing, so its submit acts only through the page's own fields).
      const session = readCookie(req.headers.cookie, cookieNames(settings).session);
      const authenticator = ports.find('authenticator');
      if (
        session !== undefined &&
        authenticator &&
        req.headers.authorization === undefined &&
        !session.startsWith(PERSONAL_TOKEN_PREFIX) &&
        (req.method !== 'POST' || held !== undefined)
      ) {
        let user: Promise<AuthUser | null> | undefined;
        request.sessionUser = () => (user ??= authenticator.authenticate(session).catch(() => null));
      }
    }
    return Promise.resolve(produce(request)).then(({ status, html }) => {
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Referrer-Policy', 'no-referrer');
      res.setHeader('Content-Security-Policy', PAGE_CSP);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.status(status).type('html').send(html);
    });
  };
  app.get(page.path, (req, res, next) => {
    answer(req, res, (r) => page.get(r)).catch(next);
  });
  const post = page.post?.bind(page);
  if (post) {
    app.post(page.path, (req, res, next) => {
      answer(req, res, post).catch(next);
    });
  }
}

/**
 * The session cookie of a request and its CSRF proof (SPEC-3 §5), when cookie sessions are on and no
 * `Authorization` header is sent; the CSRF check runs only when the guard needs it (an unsafe method).
 */
function sessionCookieOf(req: Request, settings: Settings): GuardInput['cookie'] {
  if (!settings.cookie_sessions_enabled || req.headers.authorization !== undefined) return undefined;
  const token = readCookie(req.headers.cookie, cookieNames(settings).session);
  if (token === undefined) return undefined;
  return {
    token,
    unsafe: isUnsafeMethod(req.method),
    passesCsrf: () => passesCsrf(req.headers as SiteHeaders, settings),
  };
}

/** Whether a parsed body (an object) has any of `fields` as its own key. */
function namesAny(body: unknown, fields: readonly string[]): boolean {
  return typeof body === 'object' && body !== null && fields.some((field) => Object.hasOwn(body, field));
}

/** `ctx.user` on a route that needs a user when `global_noauth` let the request through without one. */
function noUser(): never {
  throw new SvcError('auth.not_authenticated', {
    loc: ['header', 'Authorization'],
    headers: { 'WWW-Authenticate': 'Bearer' },
  });
}

/**
 * `res.json(payload)` as Express 5 answers it, written directly in the common case: the same body (plain
 * `JSON.stringify`, the app sets no `json replacer`, `spaces` or `escape`) and the same headers in the same
 * order (`Content-Type: application/json; charset=utf-8`, `Content-Length`). Express re-parses and re-formats
 * the content type it just set, looks the type up in its MIME table and checks freshness on every answer
 * (docs/performance.md); everything that could make a difference goes the Express way: a content type or
 * transfer encoding the handler set, a conditional request (If-None-Match `*` answers 304 there), HEAD, and a
 * status without a body.
 */
function sendJson(req: Request, res: Response, payload: unknown): void {
  const status = res.statusCode;
  const body: unknown =
    req.method === 'HEAD' ||
    status === 204 ||
    status === 205 ||
    status === 304 ||
    req.headers['if-none-match'] !== undefined ||
    req.headers['if-modified-since'] !== undefined ||
    res.hasHeader('content-type') ||
    res.hasHeader('transfer-encoding')
      ? undefined
      : JSON.stringify(payload);
  if (typeof body !== 'string') {
    res.json(payload);
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(body, 'utf8')));
  res.end(body, 'utf8');
}

/**
 * Whether a request has a body, as body-parser decides it (type-is `hasBody`): a Transfer-Encoding header, or a
 * Content-Length that is a number (`0` included; the parsers then see an empty body).
 */
function hasBody(req: IncomingMessage): boolean {
  return (
    req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length']))
  );
}

/**
 * The client address (SPEC "Limits": per-address rate limit): Express's `req.ip`, which takes X-Forwarded-For
 * from trusted proxies, only when it is a valid IP address; anything else a header can carry (a name, 4 KB of
 * text) falls back to the peer's address, so a forged header cannot become an arbitrary rate-limit key.
 */
export function clientAddress(req: { ip?: string; socket: { remoteAddress?: string } }): string {
  const ip = req.ip;
  return ip && isIP(ip) !== 0 ? ip : (req.socket.remoteAddress ?? '');
}
