import { SvcError } from '../kernel/errors/svc-error.js';
import type { WebhookOutbox } from '../kernel/ports.js';
import type { IdentityRow, SocialLoginStore } from './store.js';

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
  // The rule is checked inside the deletion's transaction, under the user's lock (store.ts
  // `removeUnlessLast`): two unlinks of the last two identities, or an unlink and the deletion of the last
  // passkey, in parallel, leave one.
  const outcome = await store.removeUnlessLast(
    userId,
    identityId,
    (methods) => methods.hasPassword || methods.identities > 1 || methods.passkeys > 0,
    webhooks?.enabled
      ? (tx, row) => webhooks.record(tx, 'identity.unlinked', { userId, provider: row.provider })
      : undefined,
  );
  if (outcome === 'not_found') throw new SvcError('auth.identity_not_found');
  if (outcome === 'last') throw new SvcError('auth.last_login_method');
  return outcome;
}
