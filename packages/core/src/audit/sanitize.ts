/**
 * SPEC "Activity log recording rules" 6: C0 (and DEL), C1, U+2028 and U+2029 become spaces, so a stored or
 * emitted entry can never break a log line, a terminal or a client's rendering.
 */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/g;

const ELLIPSIS = '…';

/**
 * Replaces control characters by spaces and truncates to `max` characters (code points, so a surrogate pair
 * is never split), the last one being an ellipsis when something was cut.
 * @example sanitizeText('a\nb', 500) // 'a b'
 */
export function sanitizeText(text: string, max: number): string {
  const clean = text.replace(CONTROL_CHARACTERS, ' ');
  if (clean.length <= max) return clean; // UTF-16 length ≥ code points: nothing to cut
  const chars = Array.from(clean);
  if (chars.length <= max) return clean;
  return chars.slice(0, max - 1).join('') + ELLIPSIS;
}

/** {@link sanitizeText} that keeps null as null. */
export function sanitizeNullable(text: string | null | undefined, max: number): string | null {
  return text === null || text === undefined ? null : sanitizeText(text, max);
}

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
