import { tableName, type Settings } from '../kernel/config/schema.js';
import { defineTable, type Dialect } from '../kernel/db/define-table.js';
import { coreTables } from '../kernel/db/tables.js';
import { CREDENTIAL_ID_MAX_LENGTH, PASSKEY_NAME_MAX_LENGTH } from './constants.js';

/**
 * The passkey table (SPEC-2 "Passkeys"). `id` is the passkey's own UUID (the routes' `{id}`); `credential_id`
 * is the authenticator's credential id (base64url), unique across users, and `public_key` its COSE key
 * (base64url). Challenges are not stored here: they live 5 minutes in the shared cache (challenges.ts).
 */
export function passkeyTables(settings: Settings, dialect: Dialect) {
  const { user } = coreTables(settings, dialect);
  const name = tableName(settings, 'passkey');
  const passkey = defineTable(
    dialect,
    name,
    (c) => ({
      id: c.uuid('id').primaryKey(),
      userId: c
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      credentialId: c.text('credential_id', { length: CREDENTIAL_ID_MAX_LENGTH }).notNull(),
      publicKey: c.text('public_key').notNull(),
      // WebAuthn's signature counter is an unsigned 32-bit number: beyond PostgreSQL's integer.
      counter: c.bigint('counter').notNull().default(0),
      /** JSON array of the transports the authenticator reported (`internal`, `hybrid`, `usb`, ...). */
      transports: c.text('transports').notNull().default('[]'),
      name: c.text('name', { length: PASSKEY_NAME_MAX_LENGTH }).notNull(),
      createdAt: c
        .timestamp('created_at')
        .notNull()
        .$defaultFn(() => new Date()),
      lastUsedAt: c.timestamp('last_used_at'),
    }),
    (t, x) => [
      x.uniqueIndex(`${name}_credential_idx`).on(t.credentialId),
      x.index(`${name}_user_idx`).on(t.userId),
    ],
  );
  return { passkey };
}

export type PasskeyTables = ReturnType<typeof passkeyTables>;
