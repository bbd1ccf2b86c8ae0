import { z } from 'zod';
import { CurrentUserOut, MfaRequiredOut } from './schemas.js';

/** SPEC-3 §5: the answer of a cookie login or refresh, the user as `GET /auth/user` shows it. */
export const CookieSessionOut = z.object({ user: CurrentUserOut });

/** `POST /auth/session`: the user, or the MFA step (no cookie set). */
export const CookieLoginOut = z.union([CookieSessionOut, MfaRequiredOut]);
