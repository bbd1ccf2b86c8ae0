import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  extendZodWithOpenApi,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { documentedPath } from '../routes.js';
import { OAUTH2_PASSWORD_SCHEME, hasProjectRoutes, tokenPathOf, type DocsOptions } from './docs.js';

// Loaded with the first OpenAPI document asked for (`/openapi.json`, `/openapi-core.json`), not at start-up: the
// generator and what it imports (openapi3-ts, yaml) are about 80 modules every start paid for a page few
// requests ask for (docs/performance.md "The CLI's start").
extendZodWithOpenApi(z);

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
