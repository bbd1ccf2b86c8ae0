import { fileURLToPath } from 'node:url';

/**
 * The admin console (SPEC-3 §6, docs/admin-console.md): a single-page application for superusers, built ahead of
 * time by `packages/core/console/build.mjs` into `dist/console/` of this package and served at `/admin/` by
 * kernel/http/admin-console.ts while `admin_console_enabled` is true. Nothing is fetched from elsewhere at run
 * time: the page's script and style are files of that folder.
 */
export const ADMIN_CONSOLE_PATH = '/admin';

/**
 * The folder of the built console. The same relative path holds from the sources (`src/kernel/`, tests) and
 * from the build (`dist/kernel/`): both are two levels below the package folder.
 */
export function adminConsoleDir(): string {
  return fileURLToPath(new URL('../../dist/console/', import.meta.url));
}

/**
 * The console's Content-Security-Policy (SPEC-3 §6): scripts from its own origin only (no `unsafe-inline`, no
 * `unsafe-eval`), its one style sheet from there too, API calls to the same origin, no plugins, no `<base>`, and
 * no framing (clickjacking of a superuser's clicks).
 */
export const ADMIN_CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";
