import type { SQL } from 'drizzle-orm';
import type { Orm } from './db/database.js';
import type { Audience } from './audience.js';
import type { AuthUser, TokenPair } from './identity.js';
import type { CompiledRoute } from './routes.js';

// The user and the token pair are identity rules (kernel/identity.ts); re-exported for the features' imports.
export type { Audience, AuthUser, TokenPair };

/** Token to user, for the kernel guards (implemented by `auth`). */
export interface Authenticator {
  /**
   * Verifies an access token and loads its user with one indexed query. Throws `SvcError` with the codes of
   * SPEC "Authentication" 3 (401s, and 400 `user.disabled` for an inactive user). With `withPermissions` the
   * same query also returns the effective permission codenames (routes that require permissions).
   */
  authenticate(
    token: string,
    options?: { withPermissions?: boolean; organizationId?: string },
  ): Promise<AuthUser & { permissions?: string[]; organization?: OrganizationMembership | null }>;
  /**
   * Whether session `sessionId` of the user is still active (SPEC-2 "Sessions"): event sockets opened with
   * it check this when they open and at every 30-second check, so a revocation made outside the API (the
   * CLI) closes them too. Optional for authenticators without sessions.
   */
  sessionActive?(userId: string, sessionId: string): Promise<boolean>;
  /** Decodes an access token without a database query (activity log); null when invalid. */
  peek(token: string): { userId: string; username?: string } | null;
  /** The first superuser (for `swagger_noauth`), or null. */
  firstSuperuser(): Promise<AuthUser | null>;
}

/** Effective permissions (implemented by `rbac`). */
export interface PermissionResolver {
  /** Codenames of the user's groups and direct permissions, in one query. */
  effectivePermissions(userId: string): Promise<string[]>;
}

/** A verified `mfa_token`: its user and the claims its issuer put in. */
export interface MfaTokenClaims {
  userId: string;
  claims: Record<string, unknown>;
}

/**
 * The service's tokens beyond the access token (implemented by `auth`, whose signer holds the key, the
 * algorithm and the clock): revocation of a user's logins, and the `mfa_token` of a login's second step.
 */
export interface TokenService {
  revokeAll(userId: string): Promise<void>;
  /**
   * Signs an `mfa_token` for `userId` carrying `claims` (SPEC "Tokens (JWT)": type `mfa`, valid
   * `mfa_otp_expire_minutes`).
   */
  signMfa(userId: string, claims: Record<string, string | number | null>): string;
  /**
   * Verifies an `mfa_token` by the rules of every token (signature, algorithm, expiry, an `iat` in the future,
   * `type`, `sub`; SPEC "Authentication" 3) on the service's clock; null when it is refused.
   */
  checkMfa(token: string): MfaTokenClaims | null;
  /**
   * SPEC-3 §4: a superuser lost the power (demoted or deactivated): their impersonation sessions end, with
   * their events. Optional: a token service without impersonation has none.
   */
  endImpersonationsBy?(superuserId: string, source?: { cause: 'demotion' | 'deactivation' }): Promise<void>;
}

/** @deprecated use TokenService (the `tokens` port also issues and checks MFA tokens now) */
export type TokenRevoker = TokenService;

/** Payloads of core events (SPEC "Event types and audience"). */
export interface CoreEvents {
  login: { userId: string; username: string };
  logout: { userId: string; username: string };
  activity: {
    userId: string | null;
    username: string | null;
    method: string;
    path: string;
    statusCode: number;
    description: string | null;
  };
  user_permissions_changed: { userId: string };
  /** SPEC-2 "Sessions": a session was ended (to the user and superusers). */
  session_revoked: { userId: string; sessionId: string };
  /** SPEC-3 §4: a superuser began or ended impersonating a user (to superusers). */
  impersonation_started: { userId: string; impersonatorId: string };
  impersonation_ended: { userId: string; impersonatorId: string };
  /** SPEC-3 §2: a membership was added, changed or removed (role null) (to the user and superusers). */
  organization_membership_changed: { organizationId: string; userId: string; role: string | null };
  /** SPEC-3 section 1: an identity was linked to / unlinked from a user (to the user and superusers). */
  identity_linked: { userId: string; provider: string };
  identity_unlinked: { userId: string; provider: string };
}

/**
 * A user-level change that open event sockets must act on (SPEC "WebSocket connection"):
 * `permissions_changed` re-reads the permission audience of the user's sockets, the others close them.
 */
export type UserChange =
  'deleted' | 'deactivated' | 'password_changed' | 'superuser_changed' | 'permissions_changed';

/** Event delivery (implemented by `events`; a no-op when events are off). */
export interface EventSink {
  emit<K extends keyof CoreEvents>(type: K, data: CoreEvents[K]): void;
  /** A project event with its own audience. */
  emitCustom(type: string, data: Record<string, unknown>, audience: Audience): void;
  /** Closes or re-checks the user's open sockets at once. */
  userChanged(userId: string, change: UserChange): void;
  /**
   * Closes the open sockets of these sessions of the user with 4401, here and on every other process
   * (SPEC-2 "Sessions"); the user's sockets of other sessions stay open. Optional: a sink without sockets
   * has nothing to close.
   */
  sessionsEnded?(userId: string, sessionIds: string[]): void;
}

/**
 * An activity entry that no request of its own records: a change a request made to someone else's session
 * or account (SPEC-3 §4: an impersonation ended by the superuser's demotion; SPEC-3 §1: an identity linked at
 * a login's callback, a GET). Stored and sanitised like a request's entry (SPEC "Activity log recording rules"
 * 6), with its `activity` event.
 */
export interface ActivityEntry {
  userId: string | null;
  username: string | null;
  /** SPEC-3 §4: the superuser acting as `userId`. */
  impersonatorId?: string | null;
  /** The request that caused it (a command: `CLI`). */
  method: string;
  path: string;
  statusCode: number;
  description: string;
}

/** The audit feature's reader for the events snapshot, and its writer of entries outside requests. */
export interface ActivityReader {
  /** The last `limit` entries, oldest first, snake_case database field names; null if the table is missing. */
  recent(limit: number): Promise<Record<string, unknown>[] | null>;
  /**
   * Records an entry no request records itself ({@link ActivityEntry}); absent while `activity_log_enabled` is
   * false. Never throws: a failure is logged, as for a request's entry.
   */
  record?(entry: ActivityEntry): Promise<void>;
}

/** The second factor during login (implemented by `mfa`). */
export interface SecondFactor {
  /**
   * When the user must pass a second step, starts the challenge and returns the `mfa_token`. `known`: the
   * value of {@link loginState} read with the user's row by the login's own statement; without it the
   * second factor looks the user's state up itself. `method`: how the first factor was proven (default
   * `password`), carried to the completed login's `user.login` event (SPEC-3 §3).
   */
  startChallenge(user: AuthUser, known?: { state: unknown }, method?: LoginMethod): Promise<string | null>;
  /**
   * The user's second-factor state as an SQL expression over a row of the user table, which a password login
   * reads in the statement that finds the user (docs/performance.md "PostgreSQL round trips": one statement
   * less per login) and hands to {@link startChallenge}. Optional.
   */
  loginState?: SQL;
  /**
   * The second factor of an own-account operation (SPEC-2 "Administration and self-service": `DELETE
   * /auth/user`): nothing to check while the user has no active MFA; else `code` (a TOTP or backup code) is
   * required, 400 `auth.mfa_code_required`, and a wrong one is 400 `auth.mfa_code_incorrect`, counted on the
   * login counter like a wrong login (429 once it locks the account). A valid code is used up.
   */
  checkAccountCode(userId: string, code: string | undefined): Promise<void>;
}

/**
 * A passkey as the MFA step (implemented by `passkeys`; SPEC-2 "Passkeys"): checks the `webauthn` assertion of
 * `POST /mfa/verify` against the challenge `POST /mfa/webauthn/options` issued for the same `mfa_token`.
 */
export interface PasskeyFactor {
  /**
   * Takes the pending WebAuthn challenge of `mfaToken` for `assertion` (a WebAuthn authentication response,
   * JSON): null when none is pending for `userId` (already taken by another presentation, expired or never
   * asked for: a replay, not a guess); else the check of the assertion against it as one of `userId`'s
   * passkeys with user verification, for the caller to run once the attempt is counted. The challenge is
   * taken atomically, so of parallel presentations of one assertion exactly one gets a check (SPEC-2
   * "Passkeys": challenges work once).
   */
  takeMfaChallenge(input: {
    userId: string;
    mfaToken: string;
    assertion: unknown;
  }): Promise<(() => Promise<'ok' | 'wrong'>) | null>;
}

/**
 * One credential check holding a slot on the account's lockout counter (SPEC "Account login lock": counted
 * before the check). `admitted` false: the account is locked (`lockedUntil`) or gone, nothing was counted.
 */
export interface AttemptAdmission {
  userId: string;
  admitted: boolean;
  /** A lock ending after this was set while the check was in flight (it counted this slot). */
  liftLocksAfter: Date;
  lockedUntil: Date | null;
  /** Time spent waiting for a slot (kept out of the uniform failure timing: it depends on other requests). */
  waitedMs: number;
}

/** What proves that a login's password is still the one the login verified (SPEC "Authentication" 8). */
export type PasswordProof =
  /** The stored hash the password was verified against. */
  | { passwordHash: string }
  /** `password_changed_at` (epoch ms, or null) as it was when the password was verified. */
  | { passwordChangedAt: number | null };

/** The login lock and login completion, for password-prompt routes and the second step (implemented by `auth`). */
export interface LoginGuard {
  /** Throws 429 (`code`) with `Retry-After` while locked. */
  assertNotLocked(userId: string, code: 'auth.too_many_attempts' | 'mfa.too_many_attempts'): Promise<void>;
  /** Verifies the user's password; a wrong one is counted on the lockout counter. */
  verifyPassword(userId: string, password: string): Promise<boolean>;
  /** Takes a slot on the lockout counter for one second-factor check (waits while others are in flight). */
  admitAttempt(userId: string): Promise<AttemptAdmission>;
  /** A wrong second factor: stays counted; true when the account is now locked. */
  settleWrong(admission: AttemptAdmission): Promise<boolean>;
  /** Gives the slot back uncounted (a replay of a code that was valid, not a guess). */
  releaseAttempt(admission: AttemptAdmission): Promise<void>;
  /**
   * Issues the token pair after a completed login (MFA verify), emits `login`. Refused (401
   * `mfa.challenge_not_found`) when the password changed or the user was deactivated since `proof`.
   */
  completeLogin(
    user: AuthUser,
    proof?: PasswordProof,
    admission?: AttemptAdmission,
    /** How the user proved who they are, for the `user.login` webhook event (SPEC-3 §3). @default 'password' */
    method?: LoginMethod,
  ): Promise<TokenPair>;
  hashPassword(password: string): Promise<string>;
  /**
   * Sets a password proven by something other than the current one (a reset link, an invitation; SPEC-2
   * "Routes"): the policy (422 at `['body', field]`), 422 `auth.password_unchanged`, then `consume()` (its error
   * is thrown and nothing changes), then the hash, `password_changed_at`, the lock lifted and, with
   * `verifyEmail`, `emailVerifiedAt` when still empty; refresh tokens revoked, event sockets closed.
   */
  setPassword(
    userId: string,
    newPassword: string,
    options: { field: string; verifyEmail?: boolean; consume(): Promise<void> },
  ): Promise<void>;
}

/** Per-client-address rate limit of login, registration and MFA check (implemented by `auth`; SPEC "Limits"). */
export interface RateLimiter {
  /**
   * Counts one request of `ip` on `scope` (e.g. `login`, `register`, `mfa`); throws 429 `auth.rate_limited`
   * with `Retry-After` once `auth_rate_limit` requests were made in `auth_rate_window_seconds`. No-op when the
   * limit is 0.
   */
  hit(ip: string, scope: string): Promise<void>;
}

/** Reading a user's settings from code (implemented by `user-settings`; 30-second cache). */
export interface UserSettingsReader {
  get(userId: string, path: string): Promise<unknown>;
}

/** The app's routes as compiled at start-up (provided by `kernel/http` once every module is set up). */
export interface RouteTable {
  readonly routes: readonly CompiledRoute[];
}

/** A link mail of SPEC-2 "Mail and links": where it goes and what it carries. */
export interface AccountMail {
  userId: string;
  email: string;
  /** The link with its one-time token (a secret: never logged but with `debug` and no SMTP). */
  url: string;
  expiresAt: Date;
  /** The language to write the mail in (the user's `preferences.locale`, else `default_locale`). */
  locale: string;
}

/** An invitation mail: also the inviting username. */
export interface InvitationMail extends AccountMail {
  invitedBy: string;
}

/**
 * An invitation into an organization (SPEC-3 §2: the mailer's fourth operation). The invitee may have no
 * account yet, so there is no user id.
 */
export interface OrganizationInvitationMail {
  email: string;
  /** The link with its one-time token (a secret). */
  url: string;
  expiresAt: Date;
  locale: string;
  /** The inviter's username. */
  invitedBy: string;
  organization: { id: string; name: string; slug: string };
  role: string;
}

/** An MFA email code to deliver over SMTP (SPEC "Multi-factor routes" 6). */
export interface MfaCodeMail {
  userId: string;
  email: string;
  otpCode: string;
  expiresInMinutes: number;
}

/**
 * Mail delivery (implemented by `mail`; SPEC-2 "Mail and links"). Each call returns at once: delivery runs
 * in the background after the response, and a failure is only logged (without the link).
 */
export interface MailDelivery {
  passwordReset(mail: AccountMail): void;
  emailVerification(mail: AccountMail): void;
  invitation(mail: InvitationMail): void;
  /** SPEC-3 §2: an invitation into an organization. */
  organizationInvitation(mail: OrganizationInvitationMail): void;
  /** True when `smtp_url` is set: MFA email codes can go out over SMTP when no `mfaSender` is given. */
  readonly smtp: boolean;
  /** Delivers an MFA email code over SMTP (in the user's language); resolves when handed to the server. */
  mfaCode(mail: MfaCodeMail): Promise<void>;
}

/** Links sent on account events (implemented by `accounts`; SPEC-2 "Email verification"). */
export interface AccountLinks {
  /** Sends a verification link to the user's current email, in the background (nothing when it has none). */
  sendVerification(userId: string): void;
  /**
   * Ends the user's unused links after a change of their account (SPEC-3 §7 rule 4): `email_changed` ends
   * the password-reset and verification links, `deactivated` every link (reset, verification, invitation).
   * Every route and command that changes an email or deactivates a user calls it.
   */
  endLinks(userId: string, change: AccountChange): Promise<void>;
}

/** A change of an account that ends the links sent before it (SPEC-3 §7 rule 4). */
export type AccountChange = 'email_changed' | 'deactivated';

/**
 * Every module's part of `GET /auth/user/export` (SPEC-2 "Administration and self-service"): the
 * `accountExport` entries of all modules, gathered by the app once every module is set up.
 */
export interface AccountExportParts {
  /** Top-level key of the export to the function that returns that part for a user. */
  readonly parts: Readonly<Record<string, (userId: string) => Promise<unknown>>>;
}

/** Deleting an account (implemented by `users`: the same deletion as `DELETE /admin/user/{user_id}`). */
export interface AccountRemoval {
  /**
   * Deletes the user with everything that cascades from it (logins, MFA, settings, tokens) and closes their
   * event sockets; 400 `user.last_superuser` (at `loc`) for the only active superuser.
   */
  deleteAccount(userId: string, loc: (string | number)[]): Promise<void>;
  /**
   * The last-superuser rule of `deleteAccount` ahead of it, without locks (`deleteAccount` checks again): lets
   * a caller refuse before it uses something up (a backup code).
   */
  assertRemovable(userId: string, loc: (string | number)[]): Promise<void>;
}

/**
 * The form of a personal access token (SPEC-2 "Personal access tokens"): `svc_pat_` + 43 base64url characters.
 * The guard sends a bearer of this form to the `personalTokens` port instead of the JWT authenticator.
 */
export const PERSONAL_TOKEN_PREFIX = 'svc_pat_';

/** A request authenticated by a personal access token: its owner, with the token's share of the owner's power. */
export type PersonalTokenUser = AuthUser & { permissions: string[]; personalTokenId: string };

/** Whether the request's user came with a personal access token (for rules the route options cannot state). */
export function isPersonalTokenUser(user: AuthUser | null): user is PersonalTokenUser {
  return user !== null && 'personalTokenId' in user;
}

/** Personal access tokens for the kernel guard (implemented by `personal-tokens`, when `personal_tokens_enabled`). */
export interface PersonalTokenAuthenticator {
  /**
   * The owner of a `svc_pat_` token in one indexed query, with permissions = the owner's effective ∩ the token's,
   * staff and superuser = owner's ∧ token's (SPEC-2 "Personal access tokens"). An unknown, expired or deleted
   * token, or one of a deactivated owner, is 401 `auth.token_invalid`, counted on `clientIp`'s `auth_rate_limit`
   * window like a failed login (then 429 `auth.rate_limited`).
   */
  authenticate(token: string, clientIp: string): Promise<PersonalTokenUser>;
}

/**
 * Deleting a user's personal access tokens (implemented by `personal-tokens`, also while
 * `personal_tokens_enabled` is false: the rows are kept either way). SPEC-3 §7 rule 2: a revocation of
 * everything (`?includeTokens=true`, a mailed reset with `revokeTokens`) goes through it.
 */
export interface PersonalTokenRevoker {
  /** Deletes every personal token of the user; how many there were. */
  deleteAll(userId: string): Promise<number>;
}

// SPEC-3 §5 (browser sessions in cookies)
/** What a token-issuing route's handler hands to {@link BrowserSessions.issue}: its request and answer. */
export interface TokenRouteContext {
  /** Request headers, lower-case names. */
  headers: Record<string, string | undefined>;
  setHeader(name: string, value: string | string[]): void;
  setEnvelope(policy: boolean | 'auth-token'): void;
}

/** A login's outcome as the token-issuing routes return it: a token pair, or the MFA step. */
export type IssuedLogin =
  | { access_token: string; token_type: 'bearer'; refresh_token?: string }
  | { mfa_required: true; mfa_token: string };

/**
 * The cookie answer of every token-issuing route (implemented by `auth`; SPEC-3 §5): `POST /mfa/verify`,
 * `POST /auth/passkey/token`, `POST /auth/invitation/accept`, a social login's exchange, and any project route
 * that issues the service's tokens.
 */
export interface BrowserSessions {
  /**
   * Runs `login` and answers as its route does, or, when the request carries `X-Svc-Session: cookie` (and
   * `cookie_sessions_enabled`), as `POST /auth/session` does: a cross-site request is refused with 403
   * `auth.csrf_failed` before `login` runs (no cross-site login); a token pair becomes the cookies and the
   * enveloped `{user}`; the MFA step is answered enveloped, setting no cookie.
   * @example
   * router.post('/verify', { public: true, envelope: 'auth-token' },
   *   (ctx) => browserSessions.issue(ctx, () => service.verify(ctx.body)));
   */
  issue(ctx: TokenRouteContext, login: () => Promise<IssuedLogin>): Promise<unknown>;
}

// SPEC-3 §2 organizations ----------------------------------------------------------------------------------

/** An organization as the guard loaded it for a request: its slug and the caller's role (null: no member). */
export interface OrganizationMembership {
  slug: string;
  role: string | null;
}

/**
 * What `ctx.organization` holds on a route with `organization: true` (SPEC-3 §2 "Organization routes of a
 * project"): the organization the request names, the caller's role in it and the codenames that role grants
 * (a superuser who is no member: role null and every declared codename).
 */
export interface OrganizationContext {
  id: string;
  slug: string;
  role: string | null;
  permissions: string[];
}

/**
 * Organizations for the kernel guard and the features where a user can disappear (implemented by
 * `organizations` while `organizations_enabled`).
 */
export interface OrganizationAccess {
  /**
   * An SQL value over the outer query's user row: the organization named by the placeholder `orgId` with the
   * user's membership (JSON text `[slug, role]`, role null when no member), null when there is no such
   * organization. The authenticator reads it in the statement that loads the user (one round trip).
   */
  membershipColumn: SQL;
  /** Reads a value of {@link membershipColumn}. */
  parseMembership(value: unknown): OrganizationMembership | null;
  /** The same with a query of its own (personal tokens, `swagger_noauth`): userId null gives role null. */
  membership(userId: string | null, organizationId: string): Promise<OrganizationMembership | null>;
  /** The codenames a role grants (null: every declared codename, what a superuser who is no member sees). */
  permissionsOf(role: string | null): string[];
  /**
   * 400 `organization.last_owner` at `loc` when deleting the user would leave an organization that has other
   * members without an owner (SPEC-3 §2). Called by every deletion of an account before it deletes.
   */
  assertUserRemovable(userId: string, loc: (string | number)[]): Promise<void>;
  /**
   * Ends the pending organization invitations to the user's address and those the user sent: every route and
   * command that deactivates a user calls it (docs/organizations.md "Invitations end with the account").
   */
  endInvitationsOf(userId: string): Promise<void>;
  /**
   * Runs in the transaction of a user's deletion, before the user row goes: records `organization.member_removed`
   * for each membership the cascade takes (SPEC-3 §3) and ends the invitations as {@link endInvitationsOf}.
   * Resolves with the function to call once the deletion has committed: it emits the
   * `organization_membership_changed` (role null) of each removed membership (SPEC-3 §2); a rolled-back or
   * refused deletion never calls it.
   */
  beforeUserDeleted(tx: Orm, userId: string): Promise<() => void>;
}

// SPEC-3 §3 Webhooks: the outbox port.

/** How a login was proven (SPEC-3 §3 `user.login`'s `method`). */
export type LoginMethod = 'password' | 'passkey' | 'oauth';

/** A user as `GET /admin/user/{id}` shows it (the `data` of `user.created` and `user.updated`). */
export type WebhookUserData = Record<string, unknown> & { id: string; username: string };

/** An organization as webhook events name it (SPEC-3 §3). */
export interface WebhookOrganization {
  id: string;
  slug: string;
  name: string;
}

/** The `data` of each webhook event type (SPEC-3 §3 "Data by type"); never a secret, hash, token, code or key. */
export interface WebhookEvents {
  'user.created': WebhookUserData;
  'user.updated': WebhookUserData;
  'user.deleted': { id: string; username: string };
  'user.password_changed': { userId: string; username: string };
  'user.locked': { userId: string; username: string };
  'user.login': { userId: string; username: string; sessionId: string; method: LoginMethod };
  'session.revoked': { userId: string; sessionId: string };
  'mfa.enabled': { userId: string; method: string };
  'mfa.disabled': { userId: string; method: string };
  'identity.linked': { userId: string; provider: string };
  'identity.unlinked': { userId: string; provider: string };
  'permissions.changed': { userId: string };
  'organization.created': { organization: WebhookOrganization };
  'organization.deleted': { organization: WebhookOrganization };
  'organization.member_added': { organization: WebhookOrganization; userId: string; role: string };
  'organization.member_updated': { organization: WebhookOrganization; userId: string; role: string };
  'organization.member_removed': { organization: WebhookOrganization; userId: string; role: string };
  'webhook.test': { webhookId: string };
}

export type WebhookEventType = keyof WebhookEvents;

/**
 * The webhook outbox (SPEC-3 §3; provided by the app as a no-op, replaced by `webhooks` while
 * `webhooks_enabled`). A module that changes something a receiver cares about calls `record` with the
 * transaction of that change, on the auth database: the event row commits or rolls back with the change.
 * @example
 * await authDb.transaction(async (tx) => {
 *   await tx.insert(organization).values(row);
 *   await ports.get('webhooks').record(tx, 'organization.created', { organization: { id, slug, name } });
 * });
 */
export interface WebhookOutbox {
  /**
   * False while webhooks are off: `record` does nothing, and a caller may skip a transaction it opens only
   * for the event.
   */
  readonly enabled: boolean;
  /** Stores the event in `tx` (a transaction of the auth database), for every endpoint that subscribes to it. */
  record<K extends WebhookEventType>(tx: Orm, type: K, data: WebhookEvents[K]): Promise<void>;
  /**
   * Stores one event of `type` per item of `data` in `tx`, in a bounded number of statements whatever the
   * count (one read of the endpoints, then multi-row inserts): for a change that reaches many users at once
   * (a permission renamed, a group deleted).
   */
  recordEach<K extends WebhookEventType>(tx: Orm, type: K, data: readonly WebhookEvents[K][]): Promise<void>;
  /**
   * On PostgreSQL while on (absent otherwise): `change`, a data-modifying statement with `RETURNING` on a table
   * of the auth database, its placeholders filled from `values`, and the event in one statement outside any
   * transaction. The event is stored only when `change` returns a row; resolves with those rows as the driver
   * gives them (stored column names). For a change that needs no transaction but for its event: it saves the
   * transaction's round trips (docs/performance.md "Webhooks"). A caller that keeps `change` (one object per
   * shape of statement) has the whole statement compiled once (kernel/db/sql.ts `compiledWith`).
   */
  recordWith?<K extends WebhookEventType>(
    change: SQL,
    values: Record<string, unknown>,
    type: K,
    data: WebhookEvents[K],
  ): Promise<Record<string, unknown>[]>;
}

/** The outbox while `webhooks_enabled` is false (SPEC-3 §3), and of a process given none: records nothing. */
export const DISABLED_WEBHOOK_OUTBOX: WebhookOutbox = {
  enabled: false,
  async record() {},
  async recordEach() {},
};

/** What each port name carries. */
export interface Ports {
  authenticator: Authenticator;
  permissions: PermissionResolver;
  tokens: TokenService;
  events: EventSink;
  activity: ActivityReader;
  secondFactor: SecondFactor;
  loginGuard: LoginGuard;
  userSettings: UserSettingsReader;
  rateLimiter: RateLimiter;
  routes: RouteTable;
  mail: MailDelivery;
  accounts: AccountLinks;
  personalTokens: PersonalTokenAuthenticator;
  personalTokenRevoker: PersonalTokenRevoker;
  passkeys: PasskeyFactor;
  accountExport: AccountExportParts;
  accountRemoval: AccountRemoval;
  // SPEC-3 §5
  browserSessions: BrowserSessions;
  // SPEC-3 §2 organizations
  organizations: OrganizationAccess;
  // SPEC-3 §3 Webhooks
  webhooks: WebhookOutbox;
}

/** The registry features provide ports into and read them from (wired by `app/`). */
export interface PortRegistry {
  provide<K extends keyof Ports>(name: K, impl: Ports[K]): void;
  /** The port; throws when nobody provided it. */
  get<K extends keyof Ports>(name: K): Ports[K];
  /** The port, or undefined (optional features). */
  find<K extends keyof Ports>(name: K): Ports[K] | undefined;
}

export function createPortRegistry(): PortRegistry {
  const impls = new Map<string, unknown>();
  return {
    provide(name, impl) {
      impls.set(name, impl);
    },
    get(name) {
      const impl = impls.get(name);
      if (impl === undefined) throw new Error(`port '${String(name)}' is not provided`);
      return impl as never;
    },
    find(name) {
      return impls.get(name) as never;
    },
  };
}

export type { Orm };
