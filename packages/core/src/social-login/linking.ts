import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { checkUsername, USERNAME_MAX_LENGTH } from '../kernel/identity.js';
import type { ActivityReader, EventSink, WebhookOutbox } from '../kernel/ports.js';
import { apiBase } from '../kernel/routes.js';
import { toUserOut } from '../kernel/user-out.js';
import { NO_PASSWORD_HASH } from './constants.js';
import type { ProviderIdentity } from './provider-client.js';
import type { IdentityRow, SocialLoginStore, UserRow } from './store.js';

/** Where an identity arrives (SPEC-3 section 1): the callback of a login, the callback of a link, the exchange. */
export type EntryPoint = 'login' | 'link' | 'exchange';

/** The facts the linking rules decide on, read fresh for each decision. */
export interface LinkingFacts {
  entry: EntryPoint;
  policy: Settings['oauth_link_policy'];
  registrationEnabled: boolean;
  /** The user the identity is linked to, or null. */
  owner: string | null;
  /** A link: the caller who started it. The exchange: the user its code was issued to. */
  boundUser: string | null;
  /** Whether the provider gave an email, and said it verified it. */
  providerEmail: boolean;
  providerVerified: boolean;
  /** The account holding the provider's email (letter case aside), if any. */
  emailAccount: { id: string; emailVerified: boolean } | null;
}

/** What the linking rules decide. */
export type LinkingDecision =
  | { action: 'login'; userId: string }
  | { action: 'attach'; userId: string; then: 'login' | 'linked' }
  | { action: 'linked'; userId: string }
  | { action: 'register' }
  | { action: 'refuse'; code: LinkingRefusal };

export type LinkingRefusal =
  | 'auth.oauth_identity_in_use'
  | 'auth.oauth_account_exists'
  | 'auth.oauth_registration_disabled'
  | 'auth.oauth_login_failed';

/**
 * The linking rules of SPEC-3 section 1, as one pure decision whatever the entry point:
 * 1. a linked identity logs its user in; a link started by another user fails with `auth.oauth_identity_in_use`;
 * 2. a link attaches the identity to the caller (who proved both sides: the session and the provider login);
 * 3. not linked, and an account has the email: with `verified_email`, linked and logged in only when the
 *    provider AND the account verified it; otherwise, and always with `explicit`, `auth.oauth_account_exists`;
 * 4. not linked, no account has the email: registration when enabled, else `auth.oauth_registration_disabled`.
 * The exchange only ever logs in the user its code was issued to, through an identity still linked to them: it
 * never attaches anything (so no path links an unverified identity by itself).
 */
export function decideLinking(f: LinkingFacts): LinkingDecision {
  if (f.entry === 'exchange') {
    return f.owner !== null && f.owner === f.boundUser
      ? { action: 'login', userId: f.owner }
      : { action: 'refuse', code: 'auth.oauth_login_failed' };
  }
  if (f.owner !== null) {
    if (f.entry === 'link') {
      return f.owner === f.boundUser
        ? { action: 'linked', userId: f.owner }
        : { action: 'refuse', code: 'auth.oauth_identity_in_use' };
    }
    return { action: 'login', userId: f.owner };
  }
  if (f.entry === 'link') {
    return f.boundUser === null
      ? { action: 'refuse', code: 'auth.oauth_login_failed' }
      : { action: 'attach', userId: f.boundUser, then: 'linked' };
  }
  if (f.providerEmail && f.emailAccount) {
    const bothVerified = f.providerVerified && f.emailAccount.emailVerified;
    return f.policy === 'verified_email' && bothVerified
      ? { action: 'attach', userId: f.emailAccount.id, then: 'login' }
      : { action: 'refuse', code: 'auth.oauth_account_exists' };
  }
  return f.registrationEnabled
    ? { action: 'register' }
    : { action: 'refuse', code: 'auth.oauth_registration_disabled' };
}

/** The outcome of {@link LinkingRules.apply}: who logs in, or to whom the identity is now linked. */
export type LinkingOutcome =
  | { kind: 'login'; user: UserRow; identity: IdentityRow }
  | { kind: 'linked'; user: UserRow; identity: IdentityRow };

export interface LinkingDeps {
  settings: Settings;
  store: SocialLoginStore;
  events: () => EventSink;
  /** The webhook outbox (SPEC-3 §3), read when a change is made (the webhooks module may replace it). */
  webhooks: () => WebhookOutbox;
  /** The activity log (its writer while `activity_log_enabled`), when the audit module is there. */
  activity?: () => ActivityReader | undefined;
  now: () => Date;
}

/** A username from the provider's preferred username, else the email's local part (SPEC-3 section 1 rule 4). */
function usernameBase(identity: ProviderIdentity): string {
  for (const candidate of [identity.username, identity.email?.split('@')[0]]) {
    if (!candidate) continue;
    const check = checkUsername(candidate.toLowerCase().slice(0, USERNAME_MAX_LENGTH - 4));
    if (check.problem === null) return check.username;
  }
  return 'user';
}

/**
 * The one function every entry point goes through (SPEC-3 section 1 "Linking rules"): reads the facts, decides
 * with {@link decideLinking}, and carries the decision out (a link, an account). A link lost to a concurrent
 * callback (the unique index on the identity) is decided again on the new facts. A refusal throws its code.
 */
export function createLinkingRules(deps: LinkingDeps) {
  const { settings, store, now } = deps;

  async function facts(
    entry: EntryPoint,
    identity: ProviderIdentity,
    boundUser: string | null,
  ): Promise<{ facts: LinkingFacts; existing: IdentityRow | undefined; owner: UserRow | undefined }> {
    // The identity and its user in one query: a login through a linked identity reads nothing else here.
    const found = await store.withUser(identity.issuer, identity.subject);
    const existing = found?.identity;
    // The email account matters only to rule 3 (no owner, a login): no query otherwise.
    const account =
      !existing && entry === 'login' && identity.email ? await store.userByEmail(identity.email) : undefined;
    return {
      existing,
      owner: found?.user,
      facts: {
        entry,
        policy: settings.oauth_link_policy,
        registrationEnabled: settings.oauth_registration_enabled,
        owner: existing?.userId ?? null,
        boundUser,
        providerEmail: identity.email !== null,
        providerVerified: identity.emailVerified,
        emailAccount: account ? { id: account.id, emailVerified: account.emailVerifiedAt !== null } : null,
      },
    };
  }

  async function loadUser(userId: string): Promise<UserRow> {
    const user = await store.user(userId);
    if (!user) throw new SvcError('auth.oauth_login_failed');
    return user;
  }

  async function attach(user: UserRow, provider: string, identity: ProviderIdentity) {
    const webhooks = deps.webhooks();
    const { row, created } = await store.link(
      {
        userId: user.id,
        provider,
        issuer: identity.issuer,
        subject: identity.subject,
        email: identity.email,
        at: now(),
      },
      // SPEC-3 §3: `identity.linked` is stored in the link's transaction.
      webhooks.enabled
        ? (tx) => webhooks.record(tx, 'identity.linked', { userId: user.id, provider })
        : undefined,
    );
    if (created) deps.events().emit('identity_linked', { userId: user.id, provider });
    return { row, created };
  }

  /**
   * SPEC-3 section 1: linking is recorded in the activity log. The callback that makes a link is a GET, which
   * records nothing itself, so the link gets an entry here: the user, the callback's path. A link started with
   * `POST .../link` also has that request's entry (`started linking {provider}`), which a refusal at the
   * callback leaves alone.
   */
  async function recordLink(user: UserRow, provider: string, description: string): Promise<void> {
    await deps.activity?.()?.record?.({
      userId: user.id,
      username: user.username,
      method: 'GET',
      path: `${apiBase(settings)}/auth/oauth/${provider}/callback`,
      statusCode: 302,
      description,
    });
  }

  async function apply(
    input: { entry: EntryPoint; provider: string; identity: ProviderIdentity; boundUser?: string | null },
    retried = false,
  ): Promise<LinkingOutcome> {
    const { entry, provider, identity } = input;
    const { facts: known, existing, owner } = await facts(entry, identity, input.boundUser ?? null);
    const decision = decideLinking(known);
    switch (decision.action) {
      case 'refuse':
        throw new SvcError(decision.code);
      case 'login':
      case 'linked':
        // Both decide for the identity's owner, read with it.
        return {
          kind: decision.action,
          user: owner ?? (await loadUser(decision.userId)),
          identity: existing!,
        };
      case 'attach': {
        const user = await loadUser(decision.userId);
        // An account that cannot log in gets no identity through a login (the link's caller is signed in).
        if (decision.then === 'login' && !user.isActive) throw new SvcError('auth.oauth_login_failed');
        const { row, created } = await attach(user, provider, identity);
        if (!created) {
          if (retried) throw new SvcError('auth.oauth_identity_in_use');
          return apply(input, true); // a concurrent callback linked it: decide again
        }
        // Rule 3, the automatic link by a verified email, or the caller's own link.
        await recordLink(
          user,
          provider,
          decision.then === 'login' ? `linked ${provider} by verified email` : `linked ${provider}`,
        );
        return { kind: decision.then, user, identity: row };
      }
      case 'register': {
        const base = usernameBase(identity);
        const webhooks = deps.webhooks();
        const user = await store.createUser(
          {
            username: (attempt) => (attempt === 0 ? base : `${base}${attempt + 1}`),
            email: identity.email,
            firstName: identity.firstName ?? '',
            lastName: identity.lastName ?? '',
            passwordHash: NO_PASSWORD_HASH,
            emailVerifiedAt: identity.email && identity.emailVerified ? now() : null,
          },
          // SPEC-3 §3: `user.created` (the user as `GET /admin/user/{id}` shows it) in the insert's transaction.
          webhooks.enabled ? (tx, row) => webhooks.record(tx, 'user.created', toUserOut(row)) : undefined,
        );
        // The email was registered meanwhile: rule 3 now applies.
        if (!user)
          return retried ? Promise.reject(new SvcError('auth.oauth_account_exists')) : apply(input, true);
        const { row, created } = await attach(user, provider, identity);
        if (!created) throw new SvcError('auth.oauth_identity_in_use');
        await recordLink(user, provider, `registered with ${provider}`);
        return { kind: 'login', user, identity: row };
      }
    }
  }

  return { apply };
}

export type LinkingRules = ReturnType<typeof createLinkingRules>;
