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
  const notFound = () => new SvcError('auth.identity_not_found');
  const identities = await store.list(userId);
  if (!identities.some((row) => row.id === identityId)) throw notFound();
  const user = await store.user(userId);
  if (!user) throw notFound();
  if (
    !hasUsablePassword(user.passwordHash) &&
    identities.length === 1 &&
    (await store.passkeyCount(userId)) === 0
  ) {
    throw new SvcError('auth.last_login_method');
  }
  const removed = await store.remove(
    userId,
    identityId,
    webhooks?.enabled
      ? (tx, row) => webhooks.record(tx, 'identity.unlinked', { userId, provider: row.provider })
      : undefined,
  );
  if (!removed) throw notFound();
  return removed;
}
