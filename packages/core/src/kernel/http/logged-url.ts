/** Query parameters dropped from every logged URL, whatever their case (SPEC-3 §7 rule 7). */
const SECRET_PARAMETERS = new Set(['token', 'ticket', 'code']);
/** The scheme and authority of a request target in absolute form. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i;

/**
 * The request target as the access log shows it (SPEC-3 §7 rule 7: tokens in URLs never reach a log): the whole
 * query of a path under `/account/` and of a page path (`pagePaths`, which may carry a one-time token) is
 * dropped, and elsewhere every parameter named `token`, `ticket` or `code` in any letter case. Paths are compared
 * after percent-decoding, in lower case, with repeated slashes folded, so `/%61ccount//Reset-Password/` counts.
 *
 * @example loggedUrl('/api/x?Token=abc&page=2', new Set()) // '/api/x?page=2'
 */
export function loggedUrl(originalUrl: string, pagePaths: ReadonlySet<string>): string {
  const mark = originalUrl.indexOf('?');
  if (mark < 0) return originalUrl;
  const path = originalUrl.slice(0, mark);
  // A request target in absolute form (`GET http://host/account/...`, RFC 9112 §3.2.2) reaches the same
  // route as its path; the rules look at that path.
  const routePath = path.replace(ABSOLUTE_FORM, '');
  if (pagePaths.has(routePath) || isAccountPath(routePath)) return path;
  const kept = originalUrl
    .slice(mark + 1)
    .split('&')
    .filter((pair) => pair !== '' && !SECRET_PARAMETERS.has(parameterName(pair)));
  return kept.length > 0 ? `${path}?${kept.join('&')}` : path;
}

function isAccountPath(path: string): boolean {
  return /^\/account(\/|$)/.test(normalisedPath(path));
}

function normalisedPath(path: string): string {
  return decodeLeniently(path)
    .toLowerCase()
    .replace(/[/\\]+/g, '/');
}

/**
 * A parameter's name as the query parser sees it: decoded (`%74oken`, `+`), lower case, without the brackets
 * of `token[]` or `token[a]` (the `qs` parser Express uses reads both as `token`), trimmed.
 */
function parameterName(pair: string): string {
  const equals = pair.indexOf('=');
  const raw = equals < 0 ? pair : pair.slice(0, equals);
  const name = decodeLeniently(raw.replace(/\+/g, ' ')).toLowerCase();
  const bracket = name.indexOf('[');
  return (bracket < 0 ? name : name.slice(0, bracket)).trim();
}

/** Percent-decoding that leaves a malformed escape as it is (the log must never throw). */
function decodeLeniently(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-9a-f]{2})/gi, (escape, hex: string) => {
      const char = String.fromCharCode(parseInt(hex, 16));
      return /[\x20-\x7e]/.test(char) ? char : escape;
    });
  }
}
