import express from 'express';
import type { Settings } from '../config/schema.js';
import { SvcError } from '../errors/svc-error.js';
import { translator } from '../i18n/index.js';
import type { CompiledRoute } from '../routes.js';
import { isLocalDirect, sendError } from './respond.js';

export interface DocsOptions {
  routes: CompiledRoute[];
  settings: Settings;
  title: string;
  version: string;
  description: string;
}

/** Name of the OAuth2 password-flow security scheme (Swagger UI's "Authorize" username/password form). */
export const OAUTH2_PASSWORD_SCHEME = 'oauth2Password';

/**
 * Full path of the login route (`/api` + `api_v1_prefix` + `/auth/token`) when it is mounted, else undefined
 * (the `auth` router or that route disabled: there is nothing to log in with).
 */
export function tokenPathOf(routes: CompiledRoute[]): string | undefined {
  return routes.find(
    (r) => r.core && r.method === 'POST' && r.router.name === 'auth' && r.route.path === '/token',
  )?.path;
}

/** Full path of `POST /mfa/verify` (the login's second step) when the MFA router is mounted, else undefined. */
function mfaVerifyPathOf(routes: CompiledRoute[]): string | undefined {
  return routes.find(
    (r) => r.core && r.method === 'POST' && r.router.name === 'mfa' && r.route.path === '/verify',
  )?.path;
}

/**
 * The page's side of "Authorize" (SPEC "Authentication" 5): Swagger UI's password flow takes whatever the token
 * route answers as the token, so a login that answers `{mfa_required, mfa_token}` would be shown as authorized
 * and then send `Authorization: Bearer undefined`. This response interceptor sees the token route's answer
 * first: it asks for the second factor's code (`window.prompt`), completes the login at `/mfa/verify` (a wrong
 * code asks again) and hands Swagger UI that token pair; it unwraps an enveloped token answer
 * (`wrap_auth_token_response`); anything without an access token becomes a refusal that Swagger UI shows in the
 * Authorize dialog (`error`, `error_description`), so no request ever carries `Bearer undefined`.
 *
 * swagger-ui-express writes option functions into swagger-ui-init.js as their source text, so this function is
 * built from source (it runs in the browser and can close over nothing here; the two paths are inlined).
 */
export function authorizeResponseInterceptor(
  tokenPath: string,
  verifyPath: string | undefined,
): (response: unknown) => unknown {
  const source = `
  var tokenPath = ${JSON.stringify(tokenPath)}, verifyPath = ${JSON.stringify(verifyPath ?? null)};
  var url;
  try { url = new URL(response.url, window.location.href); } catch (e) { return response; }
  if (url.pathname !== tokenPath || !response.ok) return response;
  function parse(text) { try { return JSON.parse(text); } catch (e) { return null; } }
  function unwrap(b) {
    return b && typeof b === 'object' && 'success' in b && b.data && typeof b.data === 'object' ? b.data : b;
  }
  function answer(status, statusText, body) {
    var text = JSON.stringify(body);
    return { ok: status >= 200 && status < 300, url: response.url, status: status, statusText: statusText,
      headers: response.headers, text: text, data: text, body: body, obj: body };
  }
  function refuse(error, description) {
    return answer(401, 'Login not completed', { error: error, error_description: description });
  }
  function tokens(b) {
    b = unwrap(b);
    if (!b || typeof b.access_token !== 'string' || b.access_token === '') {
      return refuse('invalid_token_response', 'The login answer holds no access token.');
    }
    return answer(200, 'OK', b);
  }
  var first = unwrap(parse(typeof response.text === 'string' ? response.text : response.data));
  if (!first || first.mfa_required !== true) return tokens(first);
  if (!verifyPath) {
    return refuse('mfa_required', 'This account needs a second factor and this server has no MFA verify route.');
  }
  var note = 'This account uses multi-factor authentication. Enter the code from your authenticator app, ' +
    'the code sent to you, or a backup code:';
  return (async function () {
    for (;;) {
      var code = window.prompt(note, '');
      if (code === null || code.trim() === '') {
        return refuse('mfa_required', 'The second factor was not given: log in again and enter the MFA code.');
      }
      var res = await fetch(new URL(verifyPath, url).toString(), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ mfa_token: first.mfa_token, code: code.trim() }),
      });
      var body = parse(await res.text());
      if (res.ok) return tokens(body);
      var detail = body && Array.isArray(body.detail) ? body.detail[0] : undefined;
      if (detail && detail.code === 'mfa.code_invalid') {
        note = (detail.msg || 'Wrong code.') + ' Enter the code again:';
        continue;
      }
      return refuse(detail && detail.code ? detail.code : 'mfa_failed',
        detail && detail.msg ? detail.msg : 'MFA verification failed (' + res.status + ').');
    }
  })();
`;
  return new Function('response', source) as (response: unknown) => unknown;
}

/** Whether the project has routes of its own to document at `/docs` (hidden ones are not documented). */
export function hasProjectRoutes(routes: CompiledRoute[]): boolean {
  return routes.some((r) => !r.core && !r.route.options.hidden);
}

/**
 * `/docs` (project routes) and `/docs/core` (core routes) with their OpenAPI documents at
 * `/openapi.json` and `/openapi-core.json`. With `docs_enabled` false none of them exist (404).
 */
export function mountDocs(app: express.Express, options: DocsOptions): void {
  if (!options.settings.docs_enabled) return;
  // The two documents, generated on the first request for one (openapi-document.ts loads then).
  let documents: Promise<{ project: Record<string, unknown>; core: Record<string, unknown> }> | undefined;
  const build = () =>
    (documents ??= import('./openapi-document.js')
      .then(({ buildOpenApiDocument }) => ({
        project: buildOpenApiDocument(options, false),
        core: buildOpenApiDocument(options, true),
      }))
      .catch((error: unknown) => {
        documents = undefined; // a failure is not kept: the next request tries again, as before
        throw error;
      }));
  // swagger_noauth is a development aid: only direct loopback requests may use the docs then.
  const localOnly: express.RequestHandler = (req, res, next) => {
    if (options.settings.swagger_noauth && !isLocalDirect(req)) {
      sendError(res, new SvcError('access.loopback_only'), translator(options.settings.default_locale));
      return;
    }
    next();
  };
  app.get('/openapi.json', localOnly, (_req, res, next) => {
    build().then((built) => res.json(built.project), next);
  });
  app.get('/openapi-core.json', localOnly, (_req, res, next) => {
    build().then((built) => res.json(built.core), next);
  });
  const tokenPath = tokenPathOf(options.routes);
  const responseInterceptor =
    tokenPath === undefined
      ? undefined
      : authorizeResponseInterceptor(tokenPath, mfaVerifyPathOf(options.routes));
  const uiOptions = (url: string) => ({
    swaggerOptions: { url, persistAuthorization: true, responseInterceptor },
    customSiteTitle: options.title,
  });
  // swagger-ui-express (and swagger-ui-dist behind it) loads on the first /docs request, not at start-up
  // (docs/performance.md, cold start). The router it fills answers as the four mounts on `app` did: /docs/core first.
  let ui: Promise<express.Router> | undefined;
  const loadUi = () =>
    (ui ??= import('swagger-ui-express').then(({ default: swaggerUi }) => {
      const router = express.Router();
      router.use('/core', swaggerUi.serveFiles(undefined, uiOptions('/openapi-core.json')));
      router.get('/core', swaggerUi.setup(undefined, uiOptions('/openapi-core.json')));
      router.use('/', swaggerUi.serveFiles(undefined, uiOptions('/openapi.json')));
      router.get('/', swaggerUi.setup(undefined, uiOptions('/openapi.json')));
      return router;
    }));
  // The server's address opened in a browser, the first thing a newcomer does: the root has no route of its
  // own, and a 404 there looks broken. It leads to the documentation (docs/getting-started.md): the
  // project's routes when it has some, else the core routes, which is also where /docs leads then, since
  // an empty page of project routes would look broken too.
  const home = hasProjectRoutes(options.routes) ? '/docs/' : '/docs/core'; // /docs itself redirects to /docs/
  app.get('/', (_req, res) => res.redirect(302, home));
  if (home === '/docs/core') {
    app.get('/docs', localOnly, (_req, res) => res.redirect(302, '/docs/core'));
  }
  app.use('/docs', localOnly, (req, res, next) => {
    loadUi().then((router) => router(req, res, next), next);
  });
}
