import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A folder of files (a built frontend) served outside `/api` on the API's own origin, so the page calls the API
 * without CORS and its tokens never cross origins (docs/client.md "Serving the frontend").
 * @example
 * createApp({ staticFiles: [{ path: '/app', dir: 'frontend/dist' }] }); // http://127.0.0.1:8000/app/
 */
export interface StaticFiles {
  /** URL path the folder answers under, e.g. `/app`: one or more segments, outside `/api` and `/docs`. */
  path: string;
  /** The folder: absolute, a `file:` URL, or relative to the project directory (`baseDir`). */
  dir: string | URL;
  /**
   * The pages' Content-Security-Policy; widen it when the page loads from another origin (a CDN, an API
   * elsewhere). @default STATIC_FILES_CSP: scripts, styles, images and connections from the same origin only,
   * nothing inline
   */
  contentSecurityPolicy?: string;
}

/**
 * The default Content-Security-Policy of static files: the page's own scripts and styles from `'self'`, no
 * inline script or style, no plugins, connections (fetch, the event WebSocket) to the same origin only.
 */
export const STATIC_FILES_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

/** A static mount with its folder resolved and its path checked. */
export interface ResolvedStaticFiles {
  path: string;
  dir: string;
  contentSecurityPolicy: string;
}

/** Paths a static mount may not take: the API and the docs answer there (SPEC "HTTP API", "Docs"). */
function reservedPrefixes(apiBase: string): string[] {
  return ['/api', apiBase, '/docs', '/openapi.json', '/openapi-core.json'];
}

/**
 * Checks each mount's path and resolves its folder against the project directory; throws, naming the mount,
 * on a path that is not a plain absolute path or that overlaps the API or the docs (a startup mistake).
 */
export function resolveStaticFiles(
  mounts: readonly StaticFiles[],
  options: { baseDir: string; apiBase: string; adminConsole?: boolean },
): ResolvedStaticFiles[] {
  const seen = new Set<string>();
  return mounts.map((mount) => {
    const { path } = mount;
    const segments = path.split('/').slice(1);
    const plain =
      path.startsWith('/') &&
      segments.length > 0 &&
      segments.every((segment) => /^[A-Za-z0-9._~-]+$/.test(segment) && segment !== '.' && segment !== '..');
    if (!plain) {
      throw new Error(
        `staticFiles: path ${JSON.stringify(path)} must be like "/app" (segments of letters, digits, . _ ~ -; no trailing slash)`,
      );
    }
    const clash = reservedPrefixes(options.apiBase).find(
      (reserved) => path === reserved || path.startsWith(`${reserved}/`) || reserved.startsWith(`${path}/`),
    );
    if (clash) throw new Error(`staticFiles: path ${path} overlaps ${clash}, where svc answers`);
    // SPEC-3 §6: the admin console answers at /admin/ while admin_console_enabled (docs/admin-console.md).
    if (options.adminConsole && (path === '/admin' || path.startsWith('/admin/')))
      throw new Error(
        `staticFiles: path ${path} overlaps the admin console at /admin/ (choose another path, or set admin_console_enabled to false)`,
      );
    if (seen.has(path)) throw new Error(`staticFiles: path ${path} is given twice`);
    seen.add(path);
    const dir = mount.dir instanceof URL ? fileURLToPath(mount.dir) : mount.dir;
    return {
      path,
      dir: isAbsolute(dir) ? dir : resolve(options.baseDir, dir),
      contentSecurityPolicy: mount.contentSecurityPolicy ?? STATIC_FILES_CSP,
    };
  });
}

/**
 * Whether the file a request path names under a static folder is really inside it (SPEC-3 §7 rule 8: a symbolic
 * link that resolves outside the served folder answers 404): the target and, for a folder, its `index.html` are
 * resolved through every link and compared with the folder's own resolved path. A path that names nothing, or
 * that the file server refuses anyway (a malformed escape, a NUL byte), is left to it: it answers 404.
 * @example if (!(await staysInsideFolder(mount.dir, '/linkdir/proj/auth.db'))) next(); // the uniform 404
 */
export async function staysInsideFolder(dir: string, urlPath: string): Promise<boolean> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return true;
  }
  if (decoded.includes('\0')) return true;
  let root: string;
  let target: string;
  try {
    root = await realpath(dir);
    // normalize('/' + …) as the file server does: a climb stops at the folder (it refuses `..` before this).
    target = await realpath(join(dir, normalize(`/${decoded}`)));
  } catch {
    return true; // nothing there (or a dangling link): the file server answers 404 as well
  }
  if (!isWithin(root, target)) return false;
  if (!(await stat(target)).isDirectory()) return true;
  try {
    return isWithin(root, await realpath(join(target, 'index.html')));
  } catch {
    return true; // no index.html: no listing, 404
  }
}

function isWithin(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest));
}
