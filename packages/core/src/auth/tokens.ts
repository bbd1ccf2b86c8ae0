import { createHmac, createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import type JsonWebToken from 'jsonwebtoken';
import type { Settings } from '../kernel/config/schema.js';
import { IAT_FUTURE_LEEWAY_SECONDS, TOKEN_TYPES, type TokenType } from './constants.js';

/** Claims of a verified token (SPEC "Tokens (JWT)"). */
export interface TokenClaims {
  sub?: string;
  type?: string;
  iat: number;
  exp: number;
  jti?: string;
  fam?: string;
  /** SPEC-2 "Sessions": the session (login) of an access token; absent on tokens issued before sessions. */
  sid?: string;
  /**
   * SPEC-3 §7 rule 1: when the session's login happened (seconds, as OpenID Connect's `auth_time`), on access
   * and refresh tokens alike; a refresh copies it from the refresh token it spends, so it never moves forward
   * without a login. Absent on tokens issued before it existed (such a session counts as not recent).
   */
  auth_time?: number;
  /** SPEC-3 §4: the superuser acting as `sub` (RFC 8693 `act`), on impersonation access tokens only. */
  act?: { sub?: unknown };
}

/** Why a token was refused, before any database work. */
export type TokenFailure = 'invalid' | 'wrong_type' | 'no_subject';

export type TokenCheck =
  { ok: true; claims: TokenClaims & { sub: string } } | { ok: false; failure: TokenFailure };

/** Signs and verifies the service's JWTs with one key built once (docs/performance.md "JWT key": a KeyObject is ~50x faster). */
export interface TokenSigner {
  /**
   * An access token; `sessionId` becomes its `sid` claim (SPEC-2 "Sessions"), `authTime` its `auth_time`
   * (SPEC-3 §7 rule 1: the session's login, in seconds).
   */
  signAccess(userId: string, sessionId?: string, authTime?: number): string;
  /**
   * A refresh token of login `family` (a new family when omitted) carrying the login's `authTime`; returns
   * the token and its record fields.
   */
  signRefresh(
    userId: string,
    family?: string,
    authTime?: number,
  ): { token: string; jti: string; family: string; expiresAt: Date };
  /**
   * SPEC-3 §4: an access token of `userId` in impersonation session `sessionId`, with `act: {sub:
   * impersonatorId}`, valid `impersonation_expire_minutes`; its `auth_time` is the start.
   */
  signImpersonation(userId: string, sessionId: string, impersonatorId: string): string;
  /** A short-lived `mfa` token (SPEC "Tokens (JWT)": valid `mfa_otp_expire_minutes`). */
  signMfa(userId: string, extra?: Record<string, unknown>): string;
  /** Verifies signature, algorithm, expiry, `type` and `sub`, in the order of SPEC "Authentication" 3. */
  check(token: string, type: TokenType): TokenCheck;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * jsonwebtoken (a CommonJS package that brings 47 `semver` modules) is required by the first signer, not by the
 * import of this file: the `svc` commands import it through @svc/core/internal and verify no token
 * (docs/performance.md "The CLI's start"). A server makes its signer at start-up, before its first request.
 */
const requireCommonJs = createRequire(import.meta.url);

/** The HMAC of each `algorithm` setting (RFC 7518 3.2). */
const HMAC_HASHES = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' } as const;

/**
 * Builds the signer from `secret_key` and `algorithm`. Verification accepts only the configured algorithm,
 * so `none` and every other algorithm are refused.
 * @example const signer = createTokenSigner({ settings, now: () => new Date() });
 */
export function createTokenSigner(deps: { settings: Settings; now: () => Date }): TokenSigner {
  const { settings, now } = deps;
  const jwt = requireCommonJs('jsonwebtoken') as typeof JsonWebToken;
  const key: KeyObject = createSecretKey(Buffer.from(settings.secret_key));
  const algorithm = settings.algorithm;
  const hash = HMAC_HASHES[algorithm];
  // The header of every token this signer issues, encoded once.
  const header = Buffer.from(JSON.stringify({ alg: algorithm, typ: 'JWT' })).toString('base64url');

  /**
   * The same compact JWS that `jwt.sign` makes of these claims (the header above, the claims as JSON, an
   * HMAC of both), without its option and claim validation and its stream plumbing: the claims are built
   * here, and a refresh signs two tokens (docs/performance.md). Verification stays with jsonwebtoken.
   */
  function sign(claims: Record<string, unknown>, lifetimeSeconds: number): string {
    const iat = seconds(now());
    const payload = Buffer.from(JSON.stringify({ ...claims, iat, exp: iat + lifetimeSeconds })).toString(
      'base64url',
    );
    const input = `${header}.${payload}`;
    return `${input}.${createHmac(hash, key).update(input).digest('base64url')}`;
  }

  return {
    signAccess(userId, sessionId, authTime) {
      const claims: Record<string, unknown> = { sub: userId, type: TOKEN_TYPES.access };
      if (sessionId) claims.sid = sessionId;
      if (authTime !== undefined) claims.auth_time = authTime;
      return sign(claims, settings.access_token_expire_minutes * 60);
    },
    signImpersonation(userId, sessionId, impersonatorId) {
      const claims = {
        sub: userId,
        type: TOKEN_TYPES.access,
        sid: sessionId,
        auth_time: seconds(now()),
        act: { sub: impersonatorId },
      };
      return sign(claims, settings.impersonation_expire_minutes * 60);
    },
    signRefresh(userId, family = randomUUID(), authTime) {
      const jti = randomUUID();
      const lifetime = settings.refresh_token_expire_days * 86_400;
      const claims: Record<string, unknown> = { sub: userId, type: TOKEN_TYPES.refresh, jti, fam: family };
      if (authTime !== undefined) claims.auth_time = authTime;
      const token = sign(claims, lifetime);
      return { token, jti, family, expiresAt: new Date(now().getTime() + lifetime * 1000) };
    },
    signMfa(userId, extra = {}) {
      return sign({ ...extra, sub: userId, type: TOKEN_TYPES.mfa }, settings.mfa_otp_expire_minutes * 60);
    },
    check(token, type) {
      let decoded: unknown;
      try {
        decoded = jwt.verify(token, key, { algorithms: [algorithm], clockTimestamp: seconds(now()) });
      } catch {
        return { ok: false, failure: 'invalid' };
      }
      if (typeof decoded !== 'object' || decoded === null) return { ok: false, failure: 'invalid' };
      const claims = decoded as TokenClaims;
      if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number')
        return { ok: false, failure: 'invalid' };
      // SPEC is silent on a future `iat`; refused beyond a small clock skew, since a token "issued" after the
      // next password change would survive it (the revocation compares `iat` with password_changed_at).
      if (claims.iat > seconds(now()) + IAT_FUTURE_LEEWAY_SECONDS) return { ok: false, failure: 'invalid' };
      if (claims.type !== type) return { ok: false, failure: 'wrong_type' };
      if (typeof claims.sub !== 'string' || claims.sub === '') return { ok: false, failure: 'no_subject' };
      // A malformed `auth_time` (only this signer writes it) is dropped: the session counts as not recent.
      if (claims.auth_time !== undefined && !Number.isSafeInteger(claims.auth_time)) delete claims.auth_time;
      return { ok: true, claims: claims as TokenClaims & { sub: string } };
    },
  };
}
