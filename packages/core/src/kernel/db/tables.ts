import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import * as pg from 'drizzle-orm/pg-core';
import * as sq from 'drizzle-orm/sqlite-core';
import { tableName, type Settings } from '../config/schema.js';
import { USERNAME_MAX_LENGTH } from '../identity.js';

/**
 * SPEC "User": an email is unique across accounts, compared without regard to letter case (kernel/identity.ts:
 * addresses are stored as written and matched by `lower()`). The unique index is on `lower(email)` so that the
 * database holds the same rule as the checks, also for two registrations racing each other.
 */
function emailIndexName(name: (base: string) => string): string {
  return `${name('user')}_email_lower_unique`;
}

/**
 * The shared core tables (user, group, permission, their links, refresh tokens, user settings).
 * Each has a SQLite and a PostgreSQL variant side by side; code is typed against the SQLite variant
 * and the PostgreSQL one is shaped the same (same property names and value types).
 */
export function sqliteCoreTables(settings: Settings) {
  const name = (base: string) => tableName(settings, base);
  const user = sq.sqliteTable(
    name('user'),
    {
      id: sq.text('id').primaryKey().$defaultFn(randomUUID),
      username: sq.text('username', { length: USERNAME_MAX_LENGTH }).notNull().unique(),
      email: sq.text('email', { length: 320 }),
      firstName: sq.text('first_name', { length: 150 }).notNull().default(''),
      lastName: sq.text('last_name', { length: 150 }).notNull().default(''),
      passwordHash: sq.text('password_hash', { length: 255 }).notNull(),
      isActive: sq.integer('is_active', { mode: 'boolean' }).notNull().default(true),
      isStaff: sq.integer('is_staff', { mode: 'boolean' }).notNull().default(false),
      isSuperuser: sq.integer('is_superuser', { mode: 'boolean' }).notNull().default(false),
      emailVerifiedAt: sq.integer('email_verified_at', { mode: 'timestamp_ms' }),
      lastLoginAt: sq.integer('last_login_at', { mode: 'timestamp_ms' }),
      createdAt: sq
        .integer('created_at', { mode: 'timestamp_ms' })
        .notNull()
        .$defaultFn(() => new Date()),
      passwordChangedAt: sq.integer('password_changed_at', { mode: 'timestamp_ms' }),
      failedLoginCount: sq.integer('failed_login_count').notNull().default(0),
      lockedUntil: sq.integer('locked_until', { mode: 'timestamp_ms' }),
    },
    (t) => [
      sq.uniqueIndex(emailIndexName(name)).on(sql`lower(${t.email})`),
      // `GET /admin/user` lists newest first by default (docs/performance.md "Large tables").
      sq.index(`${name('user')}_created_at_idx`).on(t.createdAt),
    ],
  );
  const group = sq.sqliteTable(name('group'), {
    id: sq.integer('id').primaryKey({ autoIncrement: true }),
    name: sq.text('name', { length: 150 }).notNull().unique(),
    description: sq.text('description', { length: 500 }).notNull().default(''),
  });
  const permission = sq.sqliteTable(name('permission'), {
    id: sq.integer('id').primaryKey({ autoIncrement: true }),
    codename: sq.text('codename', { length: 150 }).notNull().unique(),
    description: sq.text('description', { length: 500 }).notNull().default(''),
  });
  const groupPermission = sq.sqliteTable(
    name('group_permission'),
    {
      groupId: sq
        .integer('group_id')
        .notNull()
        .references(() => group.id, { onDelete: 'cascade' }),
      permissionId: sq
        .integer('permission_id')
        .notNull()
        .references(() => permission.id, { onDelete: 'cascade' }),
    },
    (t) => [
      sq.primaryKey({ columns: [t.groupId, t.permissionId] }),
      sq.index(`${name('group_permission')}_permission_idx`).on(t.permissionId),
    ],
  );
  const userGroup = sq.sqliteTable(
    name('user_group'),
    {
      userId: sq
        .text('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      groupId: sq
        .integer('group_id')
        .notNull()
        .references(() => group.id, { onDelete: 'cascade' }),
    },
    (t) => [
      sq.primaryKey({ columns: [t.userId, t.groupId] }),
      sq.index(`${name('user_group')}_group_idx`).on(t.groupId),
    ],
  );
  const userPermission = sq.sqliteTable(
    name('user_permission'),
    {
      userId: sq
        .text('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      permissionId: sq
        .integer('permission_id')
        .notNull()
        .references(() => permission.id, { onDelete: 'cascade' }),
    },
    (t) => [
      sq.primaryKey({ columns: [t.userId, t.permissionId] }),
      sq.index(`${name('user_permission')}_permission_idx`).on(t.permissionId),
    ],
  );
  const refreshToken = sq.sqliteTable(
    name('refresh_token'),
    {
      jti: sq.text('jti').primaryKey(),
      family: sq.text('family').notNull(),
      userId: sq
        .text('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      expiresAt: sq.integer('expires_at', { mode: 'timestamp_ms' }).notNull(),
      spentAt: sq.integer('spent_at', { mode: 'timestamp_ms' }),
      createdAt: sq
        .integer('created_at', { mode: 'timestamp_ms' })
        .notNull()
        .$defaultFn(() => new Date()),
    },
    (t) => [
      sq.index(`${name('refresh_token')}_family_idx`).on(t.family),
      // (user_id, expires_at): a login deletes the user's expired records (auth/store.ts) as a range of it,
      // not by filtering every record the user holds; lookups by user_id alone use its prefix.
      sq.index(`${name('refresh_token')}_user_expires_idx`).on(t.userId, t.expiresAt),
    ],
  );
  const userSettings = sq.sqliteTable(name('user_settings'), {
    userId: sq
      .text('user_id')
      .primaryKey()
      .references(() => user.id, { onDelete: 'cascade' }),
    data: sq.text('data', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    updatedAt: sq
      .integer('updated_at', { mode: 'timestamp_ms' })
      .notNull()
      .$defaultFn(() => new Date()),
  });
  return { user, group, permission, groupPermission, userGroup, userPermission, refreshToken, userSettings };
}

export type CoreTables = ReturnType<typeof sqliteCoreTables>;

const ts = (col: string) => pg.timestamp(col, { withTimezone: true, mode: 'date' });

export function pgCoreTables(settings: Settings): CoreTables {
  const name = (base: string) => tableName(settings, base);
  const user = pg.pgTable(
    name('user'),
    {
      id: pg.uuid('id').primaryKey().$defaultFn(randomUUID),
      username: pg.varchar('username', { length: USERNAME_MAX_LENGTH }).notNull().unique(),
      email: pg.varchar('email', { length: 320 }),
      firstName: pg.varchar('first_name', { length: 150 }).notNull().default(''),
      lastName: pg.varchar('last_name', { length: 150 }).notNull().default(''),
      passwordHash: pg.varchar('password_hash', { length: 255 }).notNull(),
      isActive: pg.boolean('is_active').notNull().default(true),
      isStaff: pg.boolean('is_staff').notNull().default(false),
      isSuperuser: pg.boolean('is_superuser').notNull().default(false),
      emailVerifiedAt: ts('email_verified_at'),
      lastLoginAt: ts('last_login_at'),
      createdAt: ts('created_at')
        .notNull()
        .$defaultFn(() => new Date()),
      passwordChangedAt: ts('password_changed_at'),
      failedLoginCount: pg.integer('failed_login_count').notNull().default(0),
      lockedUntil: ts('locked_until'),
    },
    (t) => [
      pg.uniqueIndex(emailIndexName(name)).on(sql`lower(${t.email})`),
      // `GET /admin/user` lists newest first by default (docs/performance.md "Large tables").
      pg.index(`${name('user')}_created_at_idx`).on(t.createdAt),
    ],
  );
  const group = pg.pgTable(name('group'), {
    id: pg.serial('id').primaryKey(),
    name: pg.varchar('name', { length: 150 }).notNull().unique(),
    description: pg.varchar('description', { length: 500 }).notNull().default(''),
  });
  const permission = pg.pgTable(name('permission'), {
    id: pg.serial('id').primaryKey(),
    codename: pg.varchar('codename', { length: 150 }).notNull().unique(),
    description: pg.varchar('description', { length: 500 }).notNull().default(''),
  });
  const groupPermission = pg.pgTable(
    name('group_permission'),
    {
      groupId: pg
        .integer('group_id')
        .notNull()
        .references(() => group.id, { onDelete: 'cascade' }),
      permissionId: pg
        .integer('permission_id')
        .notNull()
        .references(() => permission.id, { onDelete: 'cascade' }),
    },
    (t) => [
      pg.primaryKey({ columns: [t.groupId, t.permissionId] }),
      pg.index(`${name('group_permission')}_permission_idx`).on(t.permissionId),
    ],
  );
  const userGroup = pg.pgTable(
    name('user_group'),
    {
      userId: pg
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      groupId: pg
        .integer('group_id')
        .notNull()
        .references(() => group.id, { onDelete: 'cascade' }),
    },
    (t) => [
      pg.primaryKey({ columns: [t.userId, t.groupId] }),
      pg.index(`${name('user_group')}_group_idx`).on(t.groupId),
    ],
  );
  const userPermission = pg.pgTable(
    name('user_permission'),
    {
      userId: pg
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      permissionId: pg
        .integer('permission_id')
        .notNull()
        .references(() => permission.id, { onDelete: 'cascade' }),
    },
    (t) => [
      pg.primaryKey({ columns: [t.userId, t.permissionId] }),
      pg.index(`${name('user_permission')}_permission_idx`).on(t.permissionId),
    ],
  );
  const refreshToken = pg.pgTable(
    name('refresh_token'),
    {
      jti: pg.varchar('jti', { length: 64 }).primaryKey(),
      family: pg.varchar('family', { length: 64 }).notNull(),
      userId: pg
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      expiresAt: ts('expires_at').notNull(),
      spentAt: ts('spent_at'),
      createdAt: ts('created_at')
        .notNull()
        .$defaultFn(() => new Date()),
    },
    (t) => [
      pg.index(`${name('refresh_token')}_family_idx`).on(t.family),
      // (user_id, expires_at): a login deletes the user's expired records (auth/store.ts) as a range of it,
      // not by filtering every record the user holds; lookups by user_id alone use its prefix.
      pg.index(`${name('refresh_token')}_user_expires_idx`).on(t.userId, t.expiresAt),
    ],
  );
  const userSettings = pg.pgTable(name('user_settings'), {
    userId: pg
      .uuid('user_id')
      .primaryKey()
      .references(() => user.id, { onDelete: 'cascade' }),
    data: pg.jsonb('data').$type<Record<string, unknown>>().notNull(),
    updatedAt: ts('updated_at')
      .notNull()
      .$defaultFn(() => new Date()),
  });
  const tables = {
    user,
    group,
    permission,
    groupPermission,
    userGroup,
    userPermission,
    refreshToken,
    userSettings,
  };
  return tables as unknown as CoreTables;
}

export function coreTables(settings: Settings, dialect: Dialect): CoreTables {
  return dialect === 'pg' ? pgCoreTables(settings) : sqliteCoreTables(settings);
}

export type Dialect = 'sqlite' | 'pg';
