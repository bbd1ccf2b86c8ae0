import { existsSync } from 'node:fs';
import express, { type Express } from 'express';
import type { Logger } from '../log/logger.js';
import { staysInsideFolder, type ResolvedStaticFiles } from '../static-files.js';

/**
 * Mounts each static folder (kernel/static-files.ts) with Express's serve-static: GET and HEAD only, `index.html`
 * for a folder, no directory listing (a folder without one falls through), dotfiles hidden, paths that climb out
 * of the folder (`..`, also percent-encoded) refused, and so are symbolic links that resolve outside it. Whatever is not a file falls through to the uniform 404
 * `request.not_found`. Files are revalidated on each use (`no-cache` with ETag and Last-Modified): a frontend's
 * file names need not change with each build.
 */
export function mountStaticFiles(app: Express, mounts: readonly ResolvedStaticFiles[], log: Logger): void {
  for (const mount of mounts) {
    if (!existsSync(mount.dir)) {
      // Built later (a frontend's watcher) or a wrong path: the server starts; the mount answers 404 until then.
      log.warn(`staticFiles: ${mount.dir} does not exist (yet); ${mount.path}/ answers 404 until it does`);
    }
    const serve = express.static(mount.dir, {
      index: 'index.html',
      dotfiles: 'ignore',
      redirect: true,
      fallthrough: true,
      cacheControl: false,
      etag: true,
      lastModified: true,
      setHeaders(res) {
        res.setHeader('Cache-Control', 'no-cache');
        res.setHeader('Content-Security-Policy', mount.contentSecurityPolicy);
        res.setHeader('X-Content-Type-Options', 'nosniff');
      },
    });
    app.use(mount.path, (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      // SPEC-3 §7 rule 8: a link resolving outside the folder falls through to the uniform 404.
      staysInsideFolder(mount.dir, req.path).then(
        (inside) => (inside ? serve(req, res, next) : next()),
        next,
      );
    });
  }
}
