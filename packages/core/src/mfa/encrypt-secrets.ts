import type { Settings } from '../kernel/config/schema.js';
import type { Database } from '../kernel/db/database.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { deriveMfaKeys, encryptSecret } from './secrets.js';
import { createMfaStore } from './store.js';
import type { MfaTables } from './tables.js';

/**
 * Encrypts the TOTP secrets still stored as plain text (SPEC "Versioning" 0.9 to 0.10; `svc users
 * encrypt-mfa-secrets`). Idempotent; a secret changed meanwhile is left to the next run.
 * @example const { encrypted } = await encryptPlainMfaSecrets(app.runtime);
 */
export async function encryptPlainMfaSecrets(runtime: {
  settings: Settings;
  authDb: Database;
  tables: Record<string, Record<string, unknown>>;
}): Promise<{ encrypted: number }> {
  const mfa = runtime.tables.mfa as unknown as MfaTables | undefined;
  const core = runtime.tables.core as unknown as CoreTables | undefined;
  if (!mfa?.mfaConfig || !core?.user) return { encrypted: 0 }; // the MFA module is not part of this app
  const store = createMfaStore(runtime.authDb, mfa, core);
  const key = deriveMfaKeys(runtime.settings).encryption;
  let encrypted = 0;
  for (const row of await store.plainSecrets()) {
    if (await store.encryptSecret(row.userId, row.totpSecret, encryptSecret(row.totpSecret, key)))
      encrypted++;
  }
  return { encrypted };
}
