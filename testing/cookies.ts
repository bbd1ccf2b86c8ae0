/** The Set-Cookie lines of a response, by cookie name (SPEC-3 §5: the session, refresh and CSRF cookies). */
export function setCookies(res: { headers: Headers }): Map<string, string> {
  return new Map(res.headers.getSetCookie().map((line) => [line.slice(0, line.indexOf('=')), line]));
}
