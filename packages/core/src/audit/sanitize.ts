// The text rule of SPEC "Activity log recording rules" 6 lives in the kernel: sessions apply it too.
export { sanitizeNullable, sanitizeText } from '../kernel/sanitize.js';

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Renders a route's `logAs` template (SPEC "Route protection rules" 5): `{username}` is the acting user,
 * other names are path parameters; unknown placeholders, and `{username}` of an anonymous request, stay as
 * written. The acting user wins over a path parameter that is also called `username`.
 * @example renderLogAs('archived {noteId} by {username}', { noteId: '7' }, 'alice') // 'archived 7 by alice'
 */
export function renderLogAs(
  template: string,
  params: Record<string, string>,
  username: string | null,
): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    if (name === 'username') return username ?? whole;
    return Object.hasOwn(params, name) ? String(params[name]) : whole;
  });
}

/** The fragments of `activity_log_exclude_paths` or `excludePaths`: comma-separated, trimmed, none empty. */
export function pathFragments(list: string | undefined | null): string[] {
  return (list ?? '')
    .split(',')
    .map((fragment) => fragment.trim())
    .filter((fragment) => fragment !== '');
}
