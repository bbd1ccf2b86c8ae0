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
