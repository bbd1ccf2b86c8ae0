import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Express } from 'express';
import type { Logger } from '../log/logger.js';
import { ADMIN_CONSOLE_CSP, ADMIN_CONSOLE_PATH } from '../admin-console.js';
import { escapeHtml } from '../html.js';

/**
 * How the console holds its session (docs/admin-console.md "Sign-in"): in the HttpOnly cookies of SPEC-3 §5
 * where `cookie_sessions_enabled` mounts their routes, else as bearer tokens in the tab's `sessionStorage`, so
 * that the console works with the default settings too.
 */
export type AdminConsoleSession = 'cookie' | 'bearer';

/** What the console's page says of the server (kernel/http/server.ts): read by the console at its start. */
export interface AdminConsolePage {
  session: AdminConsoleSession;
  /** The API's base path, `/api` + `api_v1_prefix` (routes.ts `apiBase`). */
  apiBase: string;
}

/** The page with `<meta name="svc-session">` and `<meta name="svc-api-base">` in its head. */
export function withPageSettings(html: string, page: AdminConsolePage): string {
  const metas =
    `  <meta name="svc-session" content="${page.session}" />\n` +
    `    <meta name="svc-api-base" content="${escapeHtml(page.apiBase)}" />\n  </head>`;
  return html.replace('</head>', metas);
}

/**
 * Mounts the admin console (SPEC-3 §6, docs/admin-console.md) at `/admin/`, in the manner of the static files
 * (kernel/http/static-files.ts) and the built-in pages (kernel/page.ts): its assets (`console.js`,
 * `console.css`) with ETag revalidation, and for `/admin/` and every client-side route below it (a path
 * without a dot, e.g. `/admin/users/42`, so that a shared or reloaded URL opens the same view) the one HTML
 * document, `Cache-Control: no-store`. Every answer carries the console's Content-Security-Policy. Anything
 * else falls through to the uniform 404. A package built without the console logs a warning and answers 404.
 */
export function mountAdminConsole(app: Express, dir: string, log: Logger, page: AdminConsolePage): void {
  const indexFile = join(dir, 'index.html');
  if (!existsSync(indexFile)) {
    log.warn(
      `admin console: ${indexFile} is missing (build the package); ${ADMIN_CONSOLE_PATH}/ answers 404`,
    );
    return;
  }
  // Read once: a few hundred bytes that change only with the package and the settings.
  const html = withPageSettings(readFileSync(indexFile, 'utf8'), page);
  const setCommon = (res: express.Response) => {
    res.setHeader('Content-Security-Policy', ADMIN_CONSOLE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
  };
  const assets = express.static(dir, {
    index: false,
    dotfiles: 'ignore',
    redirect: false,
    fallthrough: true,
    cacheControl: false,
    etag: true,
    lastModified: true,
    setHeaders(res) {
      res.setHeader('Cache-Control', 'no-cache');
      setCommon(res);
    },
  });
  app.get(ADMIN_CONSOLE_PATH, (req, res, next) => {
    // Express matches `/admin/` here too (non-strict routing): only the bare path is sent on.
    if (req.path !== ADMIN_CONSOLE_PATH) return next();
    const query = req.originalUrl.slice(req.path.length);
    res.redirect(301, `${ADMIN_CONSOLE_PATH}/${query}`);
  });
  app.use(ADMIN_CONSOLE_PATH, (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    // index.html is the page itself, answered at `/admin/` only (with no-store below).
    if (req.path === '/index.html') return next();
    if (req.path.includes('.')) return assets(req, res, next);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'same-origin');
    setCommon(res);
    res.status(200).type('html').send(html);
  });
}
