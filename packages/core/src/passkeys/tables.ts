import * as pg from 'drizzle-orm/pg-core';
import * as sq from 'drizzle-orm/sqlite-core';
import { tableName, type Settings } from '../kernel/config/schema.js';
import { pgCoreTables, sqliteCoreTables, type Dialect } from '../kernel/db/tables.js';
import { CREDENTIAL_ID_MAX_LENGTH, PASSKEY_NAME_MAX_LENGTH } from './constants.js';

/**
 * The passkey table (SPEC-2 "Passkeys"), SQLite variant; the PostgreSQL variant below has the same property
 * names and value types. `id` is the passkey's own UUID (the routes' `{id}`); `credential_id` is the
 * authenticator's credential id (base64url), unique across users, and `public_key` its COSE key (base64url).
 * Challenges are not stored here: they live 5 minutes in the shared cache (challenges.ts).
 */
export function sqlitePasskeyTables(settings: Settings) {
  const { user } = sqliteCoreTables(settings);
  const name = tableName(settings, 'passkey');
  const passkey = sq.sqliteTable(
    name,
    {
      id: sq.text('id').primaryKey(),
      userId: sq
        .text('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      credentialId: sq.text('credential_id', { length: CREDENTIAL_ID_MAX_LENGTH }).notNull(),
      publicKey: sq.text('public_key').notNull(),
      counter: sq.integer('counter').notNull().default(0),
      /** JSON array of the transports the authenticator reported (`internal`, `hybrid`, `usb`, ...). */
      transports: sq.text('transports').notNull().default('[]'),
      name: sq.text('name', { length: PASSKEY_NAME_MAX_LENGTH }).notNull(),
      createdAt: sq
        .integer('created_at', { mode: 'timestamp_ms' })
        .notNull()
        .$defaultFn(() => new Date()),
      lastUsedAt: sq.integer('last_used_at', { mode: 'timestamp_ms' }),
    },
    (t) => [
      sq.uniqueIndex(`${name}_credential_idx`).on(t.credentialId),
      sq.index(`${name}_user_idx`).on(t.userId),
    ],
  );
  return { passkey };
}

export type PasskeyTables = ReturnType<typeof sqlitePasskeyTables>;

const ts = (col: string) => pg.timestamp(col, { withTimezone: true, mode: 'date' });

export function pgPasskeyTables(settings: Settings): PasskeyTables {
  // pgCoreTables is typed as the SQLite variant (see kernel/db/tables.ts); its columns are PostgreSQL ones.
  const { user } = pgCoreTables(settings) as unknown as { user: { id: pg.PgColumn } };
  const name = tableName(settings, 'passkey');
  const passkey = pg.pgTable(
    name,
    {
      id: pg.uuid('id').primaryKey(),
      userId: pg
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      credentialId: pg.varchar('credential_id', { length: CREDENTIAL_ID_MAX_LENGTH }).notNull(),
      publicKey: pg.text('public_key').notNull(),
      // WebAuthn's signature counter is an unsigned 32-bit number: beyond PostgreSQL's integer.
      counter: pg.bigint('counter', { mode: 'number' }).notNull().default(0),
      transports: pg.text('transports').notNull().default('[]'),
      name: pg.varchar('name', { length: PASSKEY_NAME_MAX_LENGTH }).notNull(),
      createdAt: ts('created_at')
        .notNull()
        .$defaultFn(() => new Date()),
      lastUsedAt: ts('last_used_at'),
    },
    (t) => [
      pg.uniqueIndex(`${name}_credential_idx`).on(t.credentialId),
      pg.index(`${name}_user_idx`).on(t.userId),
    ],
  );
  return { passkey } as unknown as PasskeyTables;
}

/** The passkey module's tables for one dialect (the auth schema and its migrations read them). */
export function passkeyTables(settings: Settings, dialect: Dialect): PasskeyTables {
  return dialect === 'pg' ? pgPasskeyTables(settings) : sqlitePasskeyTables(settings);
}
