import type { Settings } from '../kernel/config/schema.js';
import type { Database } from '../kernel/db/database.js';
import { coreTables } from '../kernel/db/tables.js';
import { deriveMfaKeys, encryptSecret } from './secrets.js';
import { createMfaStore } from './store.js';
import { mfaTables } from './tables.js';

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
  if (!runtime.tables.mfa) return { encrypted: 0 }; // the MFA module is not part of this app
  // The same tables as the app's (built from the same settings and dialect), typed.
  const { dialect } = runtime.authDb;
  const store = createMfaStore(
    runtime.authDb,
    mfaTables(runtime.settings, dialect),
    coreTables(runtime.settings, dialect),
  );
  const key = deriveMfaKeys(runtime.settings).encryption;
  let encrypted = 0;
  for (const row of await store.plainSecrets()) {
    if (await store.encryptSecret(row.userId, row.totpSecret, encryptSecret(row.totpSecret, key)))
      encrypted++;
  }
  return { encrypted };
}
