import { randomUUID } from 'node:crypto';
import { tableName, type Settings } from '../kernel/config/schema.js';
import { defineTable, type Dialect } from '../kernel/db/define-table.js';
import { coreTables } from '../kernel/db/tables.js';
import { NAME_MAX_LENGTH, ROLE_MAX_LENGTH, SLUG_MAX_LENGTH } from './constants.js';

/** Where an invitation stands: only `pending` ones can be accepted, and only once. */
export type InvitationState = 'pending' | 'accepted' | 'revoked' | 'superseded';

/**
 * The organization tables (SPEC-3 §2; docs/organizations.md). A member row per user and organization, keyed by
 * both; deleting a user or an organization takes its memberships and invitations along (cascade). Invitations
 * are single-use tokens like SPEC-2's one-time account tokens (only the SHA-256 digest is stored, a conditional
 * update takes one), kept in a table of their own because an invitee may not have an account yet.
 */
export function organizationTables(settings: Settings, dialect: Dialect) {
  const { user } = coreTables(settings, dialect);
  const orgName = tableName(settings, 'organization');
  const organization = defineTable(
    dialect,
    orgName,
    (c) => ({
      id: c.uuid('id').primaryKey().$defaultFn(randomUUID),
      slug: c.text('slug', { length: SLUG_MAX_LENGTH }).notNull().unique(),
      name: c.text('name', { length: NAME_MAX_LENGTH }).notNull(),
      createdAt: c.timestamp('created_at').notNull(),
      // Kept by triggers on the member table (store.ts `ensureMemberCount`), so `memberCount` of a list page
      // reads no member row, whatever removes a membership (a route, the CLI, the cascade of a user's deletion).
      memberCount: c.integer('member_count').notNull().default(0),
    }),
    // `GET /admin/organizations` pages by creation time (docs/performance.md "Large tables").
    (t, x) => [x.index(`${orgName}_created_idx`).on(t.createdAt, t.id)],
  );
  const memberName = tableName(settings, 'organization_member');
  const organizationMember = defineTable(
    dialect,
    memberName,
    (c) => ({
      organizationId: c
        .uuid('organization_id')
        .notNull()
        .references(() => organization.id, { onDelete: 'cascade' }),
      userId: c
        .uuid('user_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      role: c.text('role', { length: ROLE_MAX_LENGTH }).notNull(),
      joinedAt: c.timestamp('joined_at').notNull(),
    }),
    (t, x) => [
      x.primaryKey(t.organizationId, t.userId),
      // The member list's order (first page of 100,000 members from the index) and the caller's memberships.
      x.index(`${memberName}_joined_idx`).on(t.organizationId, t.joinedAt, t.userId),
      x.index(`${memberName}_user_idx`).on(t.userId),
    ],
  );
  const invitationName = tableName(settings, 'organization_invitation');
  const organizationInvitation = defineTable(
    dialect,
    invitationName,
    (c) => ({
      id: c.uuid('id').primaryKey().$defaultFn(randomUUID),
      organizationId: c
        .uuid('organization_id')
        .notNull()
        .references(() => organization.id, { onDelete: 'cascade' }),
      digest: c.text('digest', { length: 64 }).notNull().unique(),
      email: c.text('email', { length: 320 }).notNull(),
      role: c.text('role', { length: ROLE_MAX_LENGTH }).notNull(),
      state: c.text('state', { length: 16 }).$type<InvitationState>().notNull(),
      invitedBy: c.uuid('invited_by').references(() => user.id, { onDelete: 'set null' }),
      expiresAt: c.timestamp('expires_at').notNull(),
      createdAt: c.timestamp('created_at').notNull(),
      usedAt: c.timestamp('used_at'),
    }),
    (t, x) => [x.index(`${invitationName}_org_idx`).on(t.organizationId, t.state)],
  );
  return { organization, organizationMember, organizationInvitation };
}

export type OrganizationTables = ReturnType<typeof organizationTables>;
