import { createHash, randomBytes } from 'node:crypto';
import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { isUsableHash, isUuid, toAuthUser } from '../kernel/identity.js';
import type { Logger } from '../kernel/log/logger.js';
import {
  PERSONAL_TOKEN_PREFIX,
  type AuthUser,
  type PermissionResolver,
  type PersonalTokenUser,
  type RateLimiter,
} from '../kernel/ports.js';
import {
  BLOCKED_ADDRESSES_MAX,
  EXPIRES_IN_DAYS_DEFAULT,
  LAST_USED_INTERVAL_MS,
  RATE_LIMIT_SCOPE,
  TOKEN_PREFIX_LENGTH,
  TOKEN_RANDOM_BYTES,
} from './constants.js';
import type { PersonalTokenInfo, PersonalTokenStore, TokenWithOwner } from './store.js';

/** A token as the routes show it (SPEC-2 "Personal access tokens"): no secret, no digest. */
export interface PersonalTokenOut {
  id: string;
  name: string;
  prefix: string;
  permissions: string[];
  staff: boolean;
  superuser: boolean;
  expiresAt: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/** `POST /auth/tokens` answer: the token itself, shown this once. */
export type CreatedPersonalTokenOut = Omit<PersonalTokenOut, 'lastUsedAt'> & { token: string };

export interface NewTokenInput {
  name: string;
  permissions: string[];
  staff: boolean;
  superuser: boolean;
  /** Null: no expiry. @default 90 */
  expiresInDays?: number | null;
}

export interface PersonalTokenServiceDeps {
  settings: Settings;
  store: PersonalTokenStore;
  log: Logger;
  now: () => Date;
  /** Read at call time: auth provides it (`uses`). */
  rateLimiter(): RateLimiter | undefined;
  permissions(): PermissionResolver | undefined;
}

/** `svc_pat_` + 43 base64url characters (SPEC-2): anything else is refused without a lookup. */
const TOKEN_FORM = new RegExp(`^${PERSONAL_TOKEN_PREFIX}[A-Za-z0-9_-]{43}$`);

/** Only this is stored (SPEC-2 "Only the SHA-256 digest is stored"), hex. */
export function digestOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);
const codenamesOf = (json: string): string[] => JSON.parse(json) as string[];

export function toPersonalTokenOut(row: PersonalTokenInfo): PersonalTokenOut {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    permissions: codenamesOf(row.permissions),
    staff: row.staff,
    superuser: row.superuser,
    expiresAt: iso(row.expiresAt),
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: iso(row.lastUsedAt),
  };
}

const tokenInvalid = () => new SvcError('auth.token_invalid');
const tokenNotFound = () => new SvcError('access.token_not_found');

/**
 * Personal access tokens (SPEC-2 "Personal access tokens"): issue, list and delete them, and resolve one for
 * the guard: the owner with permissions = owner's effective ∩ token's, staff and superuser = owner's ∧ token's,
 * evaluated on every request.
 */
export function createPersonalTokenService(deps: PersonalTokenServiceDeps) {
  const { store, log, now } = deps;
  /**
   * Addresses over the rate limit, to when: while blocked, every token from the address is answered 429 before
   * any lookup, so a guess that happens to be right cannot be told apart (the shared counter decides; this is
   * its verdict remembered by the process, so the valid path costs no cache round trip).
   */
  const blocked = new Map<string, number>();
  /** Tokens whose `lastUsedAt` write is in flight (one write per token at a time from this process). */
  const touching = new Set<string>();

  function assertNotBlocked(ip: string, at: number): void {
    const until = blocked.get(ip);
    if (until === undefined) return;
    if (until <= at) {
      blocked.delete(ip);
      return;
    }
    const retryAfter = String(Math.max(1, Math.ceil((until - at) / 1000)));
    throw new SvcError('auth.rate_limited', { headers: { 'Retry-After': retryAfter } });
  }

  /** An invalid token counts like a failed login on the address's window (SPEC "Limits"). */
  async function countFailure(ip: string, at: number): Promise<void> {
    try {
      await deps.rateLimiter()?.hit(ip, RATE_LIMIT_SCOPE);
    } catch (error) {
      if (error instanceof SvcError && error.code === 'auth.rate_limited') {
        const seconds = Number(error.headers['Retry-After'] ?? deps.settings.auth_rate_window_seconds);
        if (blocked.size >= BLOCKED_ADDRESSES_MAX) {
          for (const [address, until] of blocked) if (until <= at) blocked.delete(address);
          if (blocked.size >= BLOCKED_ADDRESSES_MAX) blocked.delete(blocked.keys().next().value!);
        }
        blocked.set(ip, at + seconds * 1000);
      }
      throw error;
    }
  }

  /** SPEC-2: `lastUsedAt` at most once a minute per token, after the response's lookup, never awaited. */
  function touchIfDue(token: TokenWithOwner['token'], at: Date): void {
    const last = token.lastUsedAt?.getTime();
    if (last !== undefined && at.getTime() - last < LAST_USED_INTERVAL_MS) return;
    if (touching.has(token.id)) return;
    touching.add(token.id);
    store
      .touch(token.id, at, new Date(at.getTime() - LAST_USED_INTERVAL_MS))
      .catch((error: unknown) => log.warn('personal token: lastUsedAt not written', { exc: error }))
      .finally(() => touching.delete(token.id));
  }

  async function heldBy(caller: AuthUser & { permissions?: string[] }): Promise<Set<string>> {
    if (caller.permissions) return new Set(caller.permissions);
    return new Set((await deps.permissions()?.effectivePermissions(caller.id)) ?? []);
  }

  async function assertUserExists(userId: string): Promise<void> {
    // Not a UUID: no such user (PostgreSQL's uuid column would refuse the text itself).
    if (!isUuid(userId) || !(await store.userExists(userId))) {
      throw new SvcError('user.not_found', { status: 404, loc: ['path', 'user_id'] });
    }
  }

  async function remove(userId: string, tokenId: string): Promise<void> {
    if (!isUuid(tokenId) || !(await store.deleteOf(userId, tokenId.toLowerCase()))) throw tokenNotFound();
  }

  return {
    /** `POST /auth/tokens`: only what the caller holds (a superuser passes every permission check). */
    async create(
      caller: AuthUser & { permissions?: string[] },
      input: NewTokenInput,
    ): Promise<CreatedPersonalTokenOut> {
      const permissions = [...new Set(input.permissions)].sort();
      const lacking: string[] = [];
      if (!caller.isSuperuser) {
        const held = await heldBy(caller);
        lacking.push(...permissions.filter((codename) => !held.has(codename)));
      }
      // SPEC-2: "only a caller who has the flag may set it" (a superuser without staff status has not; the
      // token's staff status is the owner's ∧ the token's on every request).
      if (input.staff && !caller.isStaff) lacking.push('staff');
      if (input.superuser && !caller.isSuperuser) lacking.push('superuser');
      if (lacking.length > 0) {
        throw new SvcError('access.permission_not_held', { params: { permissions: lacking } });
      }
      const days = input.expiresInDays === undefined ? EXPIRES_IN_DAYS_DEFAULT : input.expiresInDays;
      // SPEC-3 §7 rule 1: a token that never expires is for superusers only.
      if (days === null && !caller.isSuperuser) throw new SvcError('access.token_expiry_required');
      const max = deps.settings.personal_tokens_max_per_user;
      const limit = () => new SvcError('access.token_limit', { params: { max } });
      const createdAt = now();
      if ((await store.countLive(caller.id, createdAt)) >= max) throw limit();
      const token = `${PERSONAL_TOKEN_PREFIX}${randomBytes(TOKEN_RANDOM_BYTES).toString('base64url')}`;
      const row = await store.insert({
        userId: caller.id,
        digest: digestOf(token),
        name: input.name,
        prefix: token.slice(0, TOKEN_PREFIX_LENGTH),
        permissions: JSON.stringify(permissions),
        staff: input.staff,
        superuser: input.superuser,
        expiresAt: days === null ? null : new Date(createdAt.getTime() + days * 86_400_000),
        createdAt,
      });
      // Counted again with the new row in: of concurrent requests at the limit, none gets past it (all of
      // them may be refused; the client retries).
      if ((await store.countLive(caller.id, createdAt)) > max) {
        await store.deleteOf(caller.id, row.id);
        throw limit();
      }
      const { lastUsedAt: _unused, ...shown } = toPersonalTokenOut(row);
      return { ...shown, token };
    },

    async list(userId: string): Promise<PersonalTokenOut[]> {
      return (await store.listOf(userId)).map(toPersonalTokenOut);
    },

    /** `DELETE /auth/tokens/{token_id}`: 404 `access.token_not_found` for an unknown id or another user's. */
    remove,

    /** Deletes every token of the user (SPEC-3 §7 rule 2: a revocation that includes tokens). */
    deleteAllOf: (userId: string): Promise<number> => store.deleteAllOf(userId),

    async listOfUser(userId: string): Promise<PersonalTokenOut[]> {
      await assertUserExists(userId);
      return (await store.listOf(userId.toLowerCase())).map(toPersonalTokenOut);
    },

    async removeOfUser(userId: string, tokenId: string): Promise<void> {
      await assertUserExists(userId);
      await remove(userId.toLowerCase(), tokenId);
    },

    /** The guard's port: one indexed lookup; every refusal is the same 401 and counts on the address. */
    async authenticate(token: string, clientIp: string): Promise<PersonalTokenUser> {
      const at = now();
      assertNotBlocked(clientIp, at.getTime());
      const found = TOKEN_FORM.test(token) ? await store.byDigest(digestOf(token)) : undefined;
      const expired = found?.token.expiresAt && found.token.expiresAt.getTime() <= at.getTime();
      if (!found || expired || !found.owner.isActive) {
        await countFailure(clientIp, at.getTime());
        throw tokenInvalid();
      }
      touchIfDue(found.token, at);
      const { token: pat, owner, ownerPermissions } = found;
      const granted = codenamesOf(pat.permissions);
      // A superuser owner passes every permission check (SPEC "Route protection rules" 3), so holds all the
      // token names; anyone else holds the intersection, read now (a demoted owner demotes the token).
      const held = new Set(ownerPermissions);
      const permissions = owner.isSuperuser ? granted : granted.filter((codename) => held.has(codename));
      return {
        ...toAuthUser(owner),
        // SPEC-3 section 1: `GET /auth/user` says `hasPassword`, read from the row this lookup loaded.
        hasPassword: isUsableHash(owner.passwordHash),
        isStaff: owner.isStaff && pat.staff,
        isSuperuser: owner.isSuperuser && pat.superuser,
        permissions,
        personalTokenId: pat.id,
      };
    },
  };
}

export type PersonalTokenService = ReturnType<typeof createPersonalTokenService>;
