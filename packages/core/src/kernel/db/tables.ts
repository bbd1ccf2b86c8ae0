import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { tableName, type Settings } from '../config/schema.js';
import { USERNAME_MAX_LENGTH } from '../identity.js';
import { defineTable, type Dialect } from './define-table.js';

export type { Dialect } from './define-table.js';

/**
 * SPEC "User": an email is unique across accounts, compared without regard to letter case (kernel/identity.ts:
 * addresses are stored as written and matched by `lower()`). The unique index is on `lower(email)` so that the
 * database holds the same rule as the checks, also for two registrations racing each other.
 */
function emailIndexName(name: (base: string) => string): string {
  return `${name('user')}_email_lower_unique`;
}

/**
 * The shared core tables (user, group, permission, their links, refresh tokens, user settings), declared once
 * for both dialects (define-table.ts maps each column kind).
 */
export function coreTables(settings: Settings, dialect: Dialect) {
  const name = (base: string) => tableName(settings, base);
  const user = defineTable(
    dialect,
    name('user'),
    (c) => ({
      id: c.uuid('id').primaryKey().$defaultFn(randomUUID),
      username: c.text('username', { length: USERNAME_MAX_LENGTH }).notNull().unique(),
      email: c.text('email', { length: 320 }),
      firstName: c.text('first_name', { length: 150 }).notNull().default(''),
      lastName: c.text('last_name', { length: 150 }).notNull().default(''),
      passwordHash: c.text('password_hash', { length: 255 }).notNull(),
      isActive: c.boolean('is_active').notNull().default(true),
      isStaff: c.boolean('is_staff').notNull().default(false),
      isSuperuser: c.boolean('is_superuser').notNull().default(false),
      emailVerifiedAt: c.timestamp('email_verified_at'),
      lastLoginAt: c.timestamp('last_login_at'),
      createdAt: c
        .timestamp('created_at')
        .notNull()
        .$defaultFn(() => new Date()),
      passwordChangedAt: c.timestamp('password_changed_at'),
      failedLoginCount: c.integer('failed_login_count').notNull().default(0),
      lockedUntil: c.timestamp('locked_until'),
    }),
    (t, x) => [
      x.uniqueIndex(emailIndexName(name)).on(sql`lower(${t.email})`),
      // `GET /admin/user` lists newest first by default (docs/performance.md "Large tables").
      x.index(`${name('user')}_created_at_idx`).on(t.createdAt),
      // Its other sorts (users/store.ts `list`: the column, NULLs last, then the id in the same direction): one
      // index per column in that order, so the first page is an index read, not a sort of every user
      // (docs/performance.md "The console's lists at a million users"). The username's unique index serves
      // its sort. A column that can be NULL needs a second index on PostgreSQL for the descending order, NULLs
      // last (the first one read backwards puts them first); SQLite's DESC puts NULLs last already.
      ...(
        ['firstName', 'lastName', 'isActive', 'isStaff', 'isSuperuser', 'email', 'lastLoginAt'] as const
      ).map((key) => x.index(`${name('user')}_${t[key].name}_id_idx`).on(t[key], t.id)),
      ...(x.dialect === 'pg'
        ? (['email', 'lastLoginAt'] as const).map((key) =>
            x
              .index(`${name('user')}_${t[key].name}_desc_id_idx`)
              .on(x.descending(t[key], { nullsLast: true }), x.descending(t.id)),
          )
        : []),
    ],
  );
  const group = defineTable(dialect, name('group'), (c) => ({
    id: c.serial('id'),
    name: c.text('name', { length: 150 }).notNull().unique(),
    description: c.text('description', { length: 500 }).notNull().default(''),
  }));
  const permission = defineTable(dialect, name('permission'), (c) => ({
    id: c.serial('id'),
    codename: c.text('codename', { length: 150 }).notNull().unique(),
    description: c.text('description', { length: 500 }).notNull().default(''),
  }));
  const groupPermission = defineTable(
    dialect,
    name('group_permission'),
    (c) => ({
      groupId: c
        .integer('group_id')
        .notNull()
        .references(() => group.id, { onDelete: 'cascade' }),
      permissionId: c
        .integer('permission_id')
        .notNull()
        .references(() => permission.id, { onDelete: 'cascade' }),
    }),
    (t, x) => [
      x.primaryKey(t.groupId, t.permissionId),
      x.index(`${name('group_permission')}_permission_idx`).on(t.permissionId),
    ],
  );
  const userGroup = defineTable(
    dialect,
    name('user_group'),
    (c) => ({
      userId: c
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      groupId: c
        .integer('group_id')
        .notNull()
        .references(() => group.id, { onDelete: 'cascade' }),
    }),
    (t, x) => [x.primaryKey(t.userId, t.groupId), x.index(`${name('user_group')}_group_idx`).on(t.groupId)],
  );
  const userPermission = defineTable(
    dialect,
    name('user_permission'),
    (c) => ({
      userId: c
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      permissionId: c
        .integer('permission_id')
        .notNull()
        .references(() => permission.id, { onDelete: 'cascade' }),
    }),
    (t, x) => [
      x.primaryKey(t.userId, t.permissionId),
      x.index(`${name('user_permission')}_permission_idx`).on(t.permissionId),
    ],
  );
  const refreshToken = defineTable(
    dialect,
    name('refresh_token'),
    (c) => ({
      // `text` on SQLite since the first schema, `varchar(64)` on PostgreSQL.
      jti: c.text('jti', { length: 64, sqliteLength: false }).primaryKey(),
      family: c.text('family', { length: 64, sqliteLength: false }).notNull(),
      userId: c
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      expiresAt: c.timestamp('expires_at').notNull(),
      spentAt: c.timestamp('spent_at'),
      createdAt: c
        .timestamp('created_at')
        .notNull()
        .$defaultFn(() => new Date()),
    }),
    (t, x) => [
      x.index(`${name('refresh_token')}_family_idx`).on(t.family),
      // (user_id, expires_at): a login deletes the user's expired records (auth/store.ts) as a range of it,
      // not by filtering every record the user holds; lookups by user_id alone use its prefix.
      x.index(`${name('refresh_token')}_user_expires_idx`).on(t.userId, t.expiresAt),
    ],
  );
  const userSettings = defineTable(dialect, name('user_settings'), (c) => ({
    userId: c
      .uuid('user_id')
      .primaryKey()
      .references(() => user.id, { onDelete: 'cascade' }),
    data: c.json<Record<string, unknown>>('data').notNull(),
    updatedAt: c
      .timestamp('updated_at')
      .notNull()
      .$defaultFn(() => new Date()),
  }));
  return { user, group, permission, groupPermission, userGroup, userPermission, refreshToken, userSettings };
}

export type CoreTables = ReturnType<typeof coreTables>;
