import { SvcError } from '../kernel/errors/svc-error.js';
import type { WebhookOutbox } from '../kernel/ports.js';
import type { IdentityRow, SocialLoginStore } from './store.js';

/** A password a login can match: an Argon2 PHC string (the rule of auth's `isUsableHash`; markers match none). */
function hasUsablePassword(hash: string | null | undefined): boolean {
  return typeof hash === 'string' && hash.startsWith('$argon2');
}

/**
 * Unlinks an identity of a user (SPEC-3 section 1), for the routes and `svc users identities --unlink`: 404
 * `auth.identity_not_found` for an unknown id or another user's, 400 `auth.last_login_method` when the account
 * would keep no password, passkey or other identity. The deleted row; with `webhooks` enabled its
 * `identity.unlinked` event is stored in the deletion's transaction (SPEC-3 §3).
 */
export async function unlinkIdentity(
  store: SocialLoginStore,
  userId: string,
  identityId: string,
  webhooks?: WebhookOutbox,
): Promise<IdentityRow> {
  // The rule is checked inside the deletion's transaction, with the user's row locked (store.ts
  // `removeUnlessLast`): two unlinks of the last two identities, in parallel, leave one.
  const outcome = await store.removeUnlessLast(
    userId,
    identityId,
    (facts) => hasUsablePassword(facts.passwordHash) || facts.identities > 1 || facts.passkeys > 0,
    webhooks?.enabled
      ? (tx, row) => webhooks.record(tx, 'identity.unlinked', { userId, provider: row.provider })
      : undefined,
  );
  if (outcome === 'not_found') throw new SvcError('auth.identity_not_found');
  if (outcome === 'last') throw new SvcError('auth.last_login_method');
  return outcome;
}
