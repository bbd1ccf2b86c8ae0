import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  extendZodWithOpenApi,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import express from 'express';
import { z } from 'zod';
import type { Settings } from '../config/schema.js';
import { SvcError } from '../errors/svc-error.js';
import { translator } from '../i18n/index.js';
import { documentedPath, type CompiledRoute } from '../routes.js';
import { isLocalDirect, sendError } from './respond.js';

extendZodWithOpenApi(z);

export interface DocsOptions {
  routes: CompiledRoute[];
  settings: Settings;
  title: string;
  version: string;
  description: string;
}

const ErrorBody = z.object({
  detail: z.array(
    z.object({
      loc: z.array(z.union([z.string(), z.number()])),
      msg: z.string(),
      type: z.string(),
      code: z.string(),
      params: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
});

/** Name of the OAuth2 password-flow security scheme (Swagger UI's "Authorize" username/password form). */
export const OAUTH2_PASSWORD_SCHEME = 'oauth2Password';

/**
 * Full path of the login route (`/api` + `api_v1_prefix` + `/auth/token`) when it is mounted, else undefined
 * (the `auth` router or that route disabled: there is nothing to log in with).
 */
function tokenPathOf(routes: CompiledRoute[]): string | undefined {
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

/** The OpenAPI 3.1 document of a set of routes, generated from their zod schemas. */
export function buildOpenApiDocument(options: DocsOptions, core: boolean): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  // SPEC "Authentication" 1: OAuth2 password flow, bearer JWT. Declared in both documents so that "Authorize"
  // in /docs and /docs/core offers a username/password form posting to the token route (form body); Swagger
  // UI then sends the access token as `Authorization: Bearer`. Pasting a token still works (bearerAuth).
  // Swagger UI lists the schemes in the document's order: the password form first, the one a person uses.
  const tokenPath = tokenPathOf(options.routes);
  if (tokenPath !== undefined) {
    registry.registerComponent('securitySchemes', OAUTH2_PASSWORD_SCHEME, {
      type: 'oauth2',
      description: `Log in with a username and password (POST ${tokenPath}).`,
      flows: { password: { tokenUrl: tokenPath, scopes: {} } },
    });
  }
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
  });
  const security: Record<string, string[]>[] =
    tokenPath === undefined ? [{ bearerAuth: [] }] : [{ [OAUTH2_PASSWORD_SCHEME]: [] }, { bearerAuth: [] }];
  registry.register('ErrorBody', ErrorBody);
  for (const compiled of options.routes) {
    if (compiled.core !== core || compiled.route.options.hidden) continue;
    const opts = compiled.route.options;
    const status = opts.status ?? 200;
    const responseSchema = opts.response ?? z.unknown();
    const enveloped =
      opts.envelope === false
        ? responseSchema
        : opts.envelope === 'auth-token' && !options.settings.wrap_auth_token_response
          ? responseSchema
          : options.settings.envelope_enabled
            ? z.object({ success: z.boolean(), message: z.string().nullable(), data: responseSchema })
            : responseSchema;
    const config: RouteConfig = {
      method: compiled.method.toLowerCase() as RouteConfig['method'],
      path: documentedPath(compiled.path),
      summary: opts.summary,
      description: opts.description,
      tags: opts.tags ?? compiled.router.options.tags ?? [compiled.router.name],
      request: {},
      responses: {
        [status]:
          status === 204
            ? { description: 'No content' }
            : { description: 'Success', content: { 'application/json': { schema: enveloped } } },
        default: { description: 'Error', content: { 'application/json': { schema: ErrorBody } } },
      },
    };
    if (!compiled.requirements.public || compiled.requirements.permissions.length > 0) {
      config.security = security; // either scheme: they carry the same bearer token
    }
    if (opts.params instanceof z.ZodObject) config.request!.params = opts.params;
    if (opts.query instanceof z.ZodObject) config.request!.query = opts.query;
    if (opts.body) {
      const type = opts.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
      config.request!.body = { content: { [type]: { schema: opts.body } }, required: true };
    }
    try {
      registry.registerPath(config);
    } catch {
      // A schema the generator cannot describe still serves; it is documented without its request shapes.
      registry.registerPath({ ...config, request: {} });
    }
  }
  const generator = new OpenApiGeneratorV31(registry.definitions);
  const document = generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: core ? `${options.title} (core)` : options.title,
      version: options.version,
      description: describeDocument(options, core),
    },
  });
  // The document's own fields, as a plain record (its interface has no index signature).
  return { ...document };
}

/** Whether the project has routes of its own to document at `/docs` (hidden ones are not documented). */
function hasProjectRoutes(routes: CompiledRoute[]): boolean {
  return routes.some((r) => !r.core && !r.route.options.hidden);
}

/**
 * The page description: the project's own text, then a pointer to the other page. `/docs` shows only the
 * project's routes; a newcomer looking for login or users must learn that they are at `/docs/core`.
 */
function describeDocument(options: DocsOptions, core: boolean): string {
  const pointer = core
    ? hasProjectRoutes(options.routes)
      ? "The project's own routes are documented at [/docs](/docs)."
      : ''
    : 'The core routes (login and tokens, users, groups and permissions, user settings, MFA, health) are documented at [/docs/core](/docs/core).';
  return [options.description, pointer].filter((text) => text !== '').join('\n\n');
}

/**
 * `/docs` (project routes) and `/docs/core` (core routes) with their OpenAPI documents at
 * `/openapi.json` and `/openapi-core.json`. With `docs_enabled` false none of them exist (404).
 */
export function mountDocs(app: express.Express, options: DocsOptions): void {
  if (!options.settings.docs_enabled) return;
  let documents: { project: Record<string, unknown>; core: Record<string, unknown> } | undefined;
  const build = () =>
    (documents ??= {
      project: buildOpenApiDocument(options, false),
      core: buildOpenApiDocument(options, true),
    });
  // swagger_noauth is a development aid: only direct loopback requests may use the docs then.
  const localOnly: express.RequestHandler = (req, res, next) => {
    if (options.settings.swagger_noauth && !isLocalDirect(req)) {
      sendError(res, new SvcError('access.loopback_only'), translator(options.settings.default_locale));
      return;
    }
    next();
  };
  app.get('/openapi.json', localOnly, (_req, res) => {
    res.json(build().project);
  });
  app.get('/openapi-core.json', localOnly, (_req, res) => {
    res.json(build().core);
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
