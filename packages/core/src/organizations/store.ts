import {
  and,
  asc,
  count,
  eq,
  getTableColumns,
  getTableName,
  gt,
  inArray,
  ne,
  or,
  sql,
  type AnyColumn,
  type SQL,
} from 'drizzle-orm';
import type { Database, Orm } from '../kernel/db/database.js';
import { forUpdate, numberPlanned, textContains } from '../kernel/db/sql.js';
import type { CoreTables } from '../kernel/db/tables.js';
import { sameEmail } from '../kernel/identity.js';
import { likePattern } from '../kernel/pagination.js';
import { OWNER, TOTAL_COUNT_BOUND } from './constants.js';
import type { OrganizationTables } from './tables.js';

export type OrganizationRow = OrganizationTables['organization']['$inferSelect'];
export type MemberRow = OrganizationTables['organizationMember']['$inferSelect'];
export type InvitationRow = OrganizationTables['organizationInvitation']['$inferSelect'];

/** A member as lists show it: the membership with the user's public fields. */
export interface MemberInfo {
  userId: string;
  username: string;
  email: string | null;
  firstName: string;
  lastName: string;
  role: string;
  joinedAt: Date;
}

/** A user's membership as `GET /admin/user/{user_id}/organizations` lists it. */
export interface UserMembership {
  organization: { id: string; slug: string; name: string };
  role: string;
  joinedAt: Date;
}

/** An invitation with its inviter's username. */
export type InvitationInfo = Omit<InvitationRow, 'digest'> & { invitedByUsername: string | null };

/**
 * Stores the webhook event of a change in the change's own transaction (SPEC-3 §3 "an outbox"): given by the
 * service only while webhooks are enabled, so a write without one keeps its single statement.
 */
export type RecordOrganization = (tx: Orm, row: OrganizationRow) => Promise<void>;
/** The same for a membership change, given the member's role (the new one; the last one when removed). */
export type RecordMember = (tx: Orm, role: string) => Promise<void>;

/** Why a membership change was refused by the last-owner rule (SPEC-3 §2). */
export type OwnerOutcome<T> = { done: T } | { lastOwner: true } | { notFound: true };

/** Every query of the organizations feature (STYLE "A feature is one folder"). */
export function createOrganizationStore(db: Database, tables: OrganizationTables, core: CoreTables) {
  const { organization: o, organizationMember: m, organizationInvitation: inv } = tables;
  const { user } = core;
  const orm = db.orm;
  const { digest: _digest, ...invitationColumns } = getTableColumns(inv);
  const memberColumns = {
    userId: m.userId,
    username: user.username,
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    role: m.role,
    joinedAt: m.joinedAt,
  };
  /**
   * The last-owner rule inside a transaction: true when taking `userId`'s ownership of `orgId` away leaves
   * members without an owner. The owner rows are locked (PostgreSQL), so two owners leaving at once cannot
   * both pass; on SQLite the write transaction holds the database.
   */
  async function leavesNoOwner(tx: Orm, orgId: string, userId: string, staysMember: boolean) {
    const owners: { userId: string }[] = await forUpdate(
      db.dialect,
      tx
        .select({ userId: m.userId })
        .from(m)
        .where(and(eq(m.organizationId, orgId), eq(m.role, OWNER)))
        .orderBy(m.userId),
    );
    if (!owners.some((row) => row.userId === userId) || owners.length > 1) return false;
    if (staysMember) return true;
    const [others] = await tx
      .select({ n: count() })
      .from(m)
      .where(and(eq(m.organizationId, orgId), ne(m.userId, userId)));
    return Number(others?.n ?? 0) > 0;
  }

  return {
    /** The organization and its owner's membership, in one transaction. */
    async create(
      values: { slug: string; name: string; ownerId: string; at: Date },
      record?: RecordOrganization,
    ): Promise<OrganizationRow> {
      return db.transaction(async (tx) => {
        const [row] = await tx
          .insert(o)
          .values({ slug: values.slug, name: values.name, createdAt: values.at })
          .returning();
        await tx
          .insert(m)
          .values({ organizationId: row!.id, userId: values.ownerId, role: OWNER, joinedAt: values.at });
        if (record) await record(tx, row!);
        return row!;
      });
    },
    /** The organization; `tx`: read inside a transaction (the events of its changes). */
    async byId(id: string, tx: Orm = orm): Promise<OrganizationRow | undefined> {
      return (await tx.select().from(o).where(eq(o.id, id)))[0];
    },
    async bySlug(slug: string): Promise<OrganizationRow | undefined> {
      return (await orm.select().from(o).where(eq(o.slug, slug)))[0];
    },
    async byIdWithCount(id: string): Promise<OrganizationRow | undefined> {
      return (await orm.select().from(o).where(eq(o.id, id)))[0];
    },
    async update(
      id: string,
      changes: { slug?: string; name?: string },
    ): Promise<OrganizationRow | undefined> {
      if (Object.keys(changes).length === 0) return (await orm.select().from(o).where(eq(o.id, id)))[0];
      return (await orm.update(o).set(changes).where(eq(o.id, id)).returning())[0];
    },
    /** Deletes the organization; the user ids of its members (memberships and invitations cascade). */
    async delete(id: string, record?: RecordOrganization): Promise<string[] | undefined> {
      return db.transaction(async (tx) => {
        const members = await tx.select({ userId: m.userId }).from(m).where(eq(m.organizationId, id));
        const rows = await tx.delete(o).where(eq(o.id, id)).returning();
        if (rows[0] && record) await record(tx, rows[0]);
        return rows.length > 0 ? members.map((row) => row.userId) : undefined;
      });
    },
    /** The user's organizations with their role, oldest membership first. */
    async listOfUser(userId: string): Promise<(OrganizationRow & { role: string })[]> {
      return orm
        .select({ ...getTableColumns(o), role: m.role })
        .from(m)
        .innerJoin(o, eq(o.id, m.organizationId))
        .where(eq(m.userId, userId))
        .orderBy(asc(m.joinedAt), asc(o.id));
    },
    /**
     * Every organization, newest first, with `memberCount` (`GET /admin/organizations`): one page read in the
     * order of the `created_at, id` index, the total counted up to a bound.
     */
    async listAll(options: { search?: string; limit: number; offset: number }) {
      const text = options.search?.trim();
      const where = text
        ? or(textContains(db.dialect, text)(o.name), sql`${o.slug} like ${likePattern(text)} escape '\\'`)
        : undefined;
      const bound = Math.max(TOTAL_COUNT_BOUND, options.offset + options.limit) + 1;
      const [rows, total] = await Promise.all([
        orm
          .select()
          .from(o)
          .where(where)
          .orderBy(sql`${o.createdAt} desc`, sql`${o.id} desc`)
          .limit(options.limit)
          .offset(options.offset),
        // Planned for the search on every run (a count kept prepared may switch to a generic plan).
        numberPlanned(
          db,
          sql`select count(*) as n from (select 1 from ${o} ${where ? sql`where ${where}` : sql``} limit ${bound}) as bounded`,
        ),
      ]);
      return { rows, total };
    },
    /** One page of the members (oldest first, from the `organization_id, joined_at, user_id` index). */
    async members(orgId: string, options: { search?: string; limit: number; offset: number }) {
      const text = options.search?.trim();
      const contains = text ? textContains(db.dialect, text) : undefined;
      const where = and(
        eq(m.organizationId, orgId),
        contains
          ? or(
              contains(user.username),
              contains(user.email),
              contains(user.firstName),
              contains(user.lastName),
            )
          : undefined,
      );
      const bound = Math.max(TOTAL_COUNT_BOUND, options.offset + options.limit) + 1;
      const [rows, total] = await Promise.all([
        orm
          .select(memberColumns)
          .from(m)
          .innerJoin(user, eq(user.id, m.userId))
          .where(where)
          .orderBy(asc(m.joinedAt), asc(m.userId))
          .limit(options.limit)
          .offset(options.offset),
        numberPlanned(
          db,
          contains
            ? sql`select count(*) as n from (select 1 from ${m} inner join ${user} on ${user.id} = ${m.userId} where ${where} limit ${bound}) as bounded`
            : sql`select count(*) as n from (select 1 from ${m} where ${m.organizationId} = ${orgId} limit ${bound}) as bounded`,
        ),
      ]);
      return { rows: rows as MemberInfo[], total };
    },
    async member(orgId: string, userId: string): Promise<MemberInfo | undefined> {
      const rows = await orm
        .select(memberColumns)
        .from(m)
        .innerJoin(user, eq(user.id, m.userId))
        .where(and(eq(m.organizationId, orgId), eq(m.userId, userId)));
      return rows[0] as MemberInfo | undefined;
    },
    /** Adds a member; false when the user is a member already. */
    async addMember(
      orgId: string,
      userId: string,
      role: string,
      at: Date,
      record?: RecordMember,
    ): Promise<boolean> {
      const insert = (tx: Orm) =>
        tx
          .insert(m)
          .values({ organizationId: orgId, userId, role, joinedAt: at })
          .onConflictDoNothing()
          .returning({ userId: m.userId });
      if (!record) return (await insert(orm)).length > 0;
      return db.transaction(async (tx) => {
        const rows = await insert(tx);
        if (rows.length > 0) await record(tx, role);
        return rows.length > 0;
      });
    },
    /** Changes a role under the last-owner rule (demoting the only owner leaves members without one). */
    async setRole(
      orgId: string,
      userId: string,
      role: string,
      record?: RecordMember,
    ): Promise<OwnerOutcome<true>> {
      return db.transaction(async (tx) => {
        if (role !== OWNER && (await leavesNoOwner(tx, orgId, userId, true)))
          return { lastOwner: true as const };
        const rows = await tx
          .update(m)
          .set({ role })
          .where(and(eq(m.organizationId, orgId), eq(m.userId, userId)))
          .returning({ userId: m.userId });
        if (rows.length > 0 && record) await record(tx, role);
        return rows.length > 0 ? { done: true as const } : { notFound: true as const };
      });
    },
    /** Removes a member under the last-owner rule (the only owner may go only when nobody else stays). */
    async removeMember(orgId: string, userId: string, record?: RecordMember): Promise<OwnerOutcome<true>> {
      return db.transaction(async (tx) => {
        if (await leavesNoOwner(tx, orgId, userId, false)) return { lastOwner: true as const };
        const rows = await tx
          .delete(m)
          .where(and(eq(m.organizationId, orgId), eq(m.userId, userId)))
          .returning({ userId: m.userId, role: m.role });
        if (rows[0] && record) await record(tx, rows[0].role);
        return rows.length > 0 ? { done: true as const } : { notFound: true as const };
      });
    },
    /** The organizations (slugs) the user is the only owner of while others are members (SPEC-3 §2). */
    async soleOwnerships(userId: string): Promise<string[]> {
      const owned = orm
        .select({ organizationId: m.organizationId })
        .from(m)
        .where(and(eq(m.userId, userId), eq(m.role, OWNER)));
      const rows = await orm
        .select({ slug: o.slug })
        .from(o)
        .where(
          and(
            inArray(o.id, owned),
            sql`(SELECT count(*) FROM ${m} WHERE ${m.organizationId} = ${o.id} AND ${m.role} = ${OWNER}) = 1`,
            sql`EXISTS (SELECT 1 FROM ${m} WHERE ${m.organizationId} = ${o.id} AND ${m.userId} <> ${userId})`,
          ),
        );
      return rows.map((row) => row.slug);
    },
    /** Whether a member of the organization has this email address (any letter case). */
    async memberWithEmail(orgId: string, email: string): Promise<boolean> {
      const rows = await orm
        .select({ id: user.id })
        .from(m)
        .innerJoin(user, eq(user.id, m.userId))
        .where(and(eq(m.organizationId, orgId), sameEmail(user.email, email)))
        .limit(1);
      return rows.length > 0;
    },
    async userById(id: string) {
      return (await orm.select().from(user).where(eq(user.id, id)))[0];
    },
    async userByName(username: string) {
      return (await orm.select().from(user).where(eq(user.username, username)))[0];
    },
    /** A new invitation; earlier pending ones to the same address and organization are superseded. */
    async invite(values: Omit<InvitationRow, 'id' | 'state' | 'usedAt'>): Promise<InvitationRow> {
      return db.transaction(async (tx) => {
        await tx
          .update(inv)
          .set({ state: 'superseded' })
          .where(
            and(
              eq(inv.organizationId, values.organizationId),
              eq(inv.state, 'pending'),
              sameEmail(inv.email, values.email),
            ),
          );
        const [row] = await tx
          .insert(inv)
          .values({ ...values, state: 'pending' })
          .returning();
        return row!;
      });
    },
    /** The pending invitations of the organization (not accepted, revoked, superseded or expired). */
    async pending(orgId: string, now: Date): Promise<InvitationInfo[]> {
      return orm
        .select({ ...invitationColumns, invitedByUsername: user.username })
        .from(inv)
        .leftJoin(user, eq(user.id, inv.invitedBy))
        .where(and(eq(inv.organizationId, orgId), eq(inv.state, 'pending'), gt(inv.expiresAt, now)))
        .orderBy(asc(inv.createdAt), asc(inv.id));
    },
    /**
     * Revokes a pending invitation. 'missing': the organization has no pending invitation of that id;
     * 'forbidden': it offers `notRole` (an admin's revocation of an owner's invitation), left pending.
     */
    async revoke(orgId: string, id: string, notRole?: string): Promise<'revoked' | 'forbidden' | 'missing'> {
      const pending = and(eq(inv.id, id), eq(inv.organizationId, orgId), eq(inv.state, 'pending'));
      const rows = await orm
        .update(inv)
        .set({ state: 'revoked' })
        .where(notRole === undefined ? pending : and(pending, ne(inv.role, notRole)))
        .returning({ id: inv.id });
      if (rows.length > 0) return 'revoked';
      if (notRole === undefined) return 'missing';
      const [kept] = await orm.select({ id: inv.id }).from(inv).where(pending);
      return kept ? 'forbidden' : 'missing';
    },
    /** A usable invitation by its digest, with its organization (the join page shows it before accepting). */
    async usable(digest: string, now: Date) {
      const rows = await orm
        .select({ invitation: invitationColumns, organization: getTableColumns(o) })
        .from(inv)
        .innerJoin(o, eq(o.id, inv.organizationId))
        .where(and(eq(inv.digest, digest), eq(inv.state, 'pending'), gt(inv.expiresAt, now)));
      return rows[0];
    },
    /**
     * Takes the invitation and adds the member in one transaction: of concurrent accepts exactly one
     * conditional update finds the row pending (SPEC-2 "One-time account tokens"). Null: already taken.
     * An existing member keeps their role (and `record`, the event of a new member, is not called).
     *
     * 'ownerless': the organization has no owner left (its last owner left as its last member, or their
     * account went), and a member joining it would be a member without an owner (SPEC-3 §2). The invitation
     * is revoked instead, unless it makes an owner. The owner rows are locked as {@link leavesNoOwner} locks
     * them, so an owner leaving at the same time either sees the new member (and is refused) or has left
     * before this reads (and the invitation is revoked).
     */
    async accept(
      digest: string,
      userId: string,
      now: Date,
      record?: (tx: Orm, organizationId: string, role: string) => Promise<void>,
    ): Promise<{ role: string } | 'ownerless' | null> {
      return db.transaction(async (tx) => {
        const [taken] = await tx
          .update(inv)
          .set({ state: 'accepted', usedAt: now })
          .where(and(eq(inv.digest, digest), eq(inv.state, 'pending'), gt(inv.expiresAt, now)))
          .returning({ id: inv.id, organizationId: inv.organizationId, role: inv.role });
        if (!taken) return null;
        if (taken.role !== OWNER) {
          const owners: unknown[] = await forUpdate(
            db.dialect,
            tx
              .select({ userId: m.userId })
              .from(m)
              .where(and(eq(m.organizationId, taken.organizationId), eq(m.role, OWNER)))
              .orderBy(m.userId),
          );
          if (owners.length === 0) {
            await tx.update(inv).set({ state: 'revoked', usedAt: null }).where(eq(inv.id, taken.id));
            return 'ownerless';
          }
        }
        const added = await tx
          .insert(m)
          .values({ organizationId: taken.organizationId, userId, role: taken.role, joinedAt: now })
          .onConflictDoNothing()
          .returning({ userId: m.userId });
        if (added.length > 0 && record) await record(tx, taken.organizationId, taken.role);
        const [member] = await tx
          .select({ role: m.role })
          .from(m)
          .where(and(eq(m.organizationId, taken.organizationId), eq(m.userId, userId)));
        return { role: member?.role ?? taken.role };
      });
    },
    /**
     * Ends the pending invitations addressed to the user's email or sent by the user (docs/organizations.md
     * "Invitations end with the account"): a deactivation or a deletion of the account. `tx`: inside the
     * deletion's transaction, before the user row (and its address) goes.
     */
    async endInvitationsOf(userId: string, tx: Orm = orm): Promise<number> {
      const address = sql`(SELECT lower(${user.email}) FROM ${user} WHERE ${user.id} = ${userId})`;
      const rows = await tx
        .update(inv)
        .set({ state: 'revoked' })
        .where(
          and(eq(inv.state, 'pending'), or(eq(inv.invitedBy, userId), sql`lower(${inv.email}) = ${address}`)),
        )
        .returning({ id: inv.id });
      return rows.length;
    },
    /** The user's memberships with their organizations, read in `tx` (the events of a user's deletion). */
    async membershipsOf(userId: string, tx: Orm) {
      return tx
        .select({ id: o.id, slug: o.slug, name: o.name, role: m.role })
        .from(m)
        .innerJoin(o, eq(o.id, m.organizationId))
        .where(eq(m.userId, userId))
        .orderBy(asc(m.joinedAt), asc(o.id));
    },
    /**
     * A user's memberships for a superuser, or undefined for no such user: one query (the user row, left-joined
     * to its memberships through the member table's `user_id` index and to their organizations).
     */
    async membershipsOfUser(userId: string): Promise<UserMembership[] | undefined> {
      const rows = await orm
        .select({ userId: user.id, id: o.id, slug: o.slug, name: o.name, role: m.role, joinedAt: m.joinedAt })
        .from(user)
        .leftJoin(m, eq(m.userId, user.id))
        .leftJoin(o, eq(o.id, m.organizationId))
        .where(eq(user.id, userId))
        .orderBy(asc(m.joinedAt), asc(o.slug));
      if (rows.length === 0) return undefined;
      const memberships: UserMembership[] = [];
      for (const r of rows) {
        // A user without memberships: one row of nulls from the left joins.
        if (r.id === null || r.slug === null || r.name === null || r.role === null || r.joinedAt === null)
          continue;
        memberships.push({
          organization: { id: r.id, slug: r.slug, name: r.name },
          role: r.role,
          joinedAt: r.joinedAt,
        });
      }
      return memberships;
    },
    /** The user's memberships for the account export. */
    async exportOf(userId: string) {
      return orm
        .select({ id: o.id, slug: o.slug, name: o.name, role: m.role, joinedAt: m.joinedAt })
        .from(m)
        .innerJoin(o, eq(o.id, m.organizationId))
        .where(eq(m.userId, userId))
        .orderBy(asc(m.joinedAt));
    },
    /**
     * Creates the triggers that keep `member_count` (once; the counts are taken from the member table then), in
     * one transaction, so two instances starting together cannot both fill them. PostgreSQL: one function and
     * one row trigger; SQLite: an insert and a delete trigger (they fire for foreign-key cascades too).
     */
    async ensureMemberCount(): Promise<void> {
      const orgTable = getTableName(o);
      const memberTable = getTableName(m);
      const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
      const trigger = `${memberTable}_count`;
      // One pass over the member table (a correlated count per organization would scan it once per
      // organization where the planner takes the index for unselective: 10,000 x 100,000 rows).
      const recount =
        `UPDATE ${q(orgTable)} SET member_count = 0; ` +
        `UPDATE ${q(orgTable)} SET member_count = c.n FROM (SELECT organization_id, count(*) AS n ` +
        `FROM ${q(memberTable)} GROUP BY organization_id) AS c WHERE c.organization_id = ${q(orgTable)}.id`;
      if (db.dialect === 'pg') {
        const fn = q(`${trigger}_fn`);
        // One statement, one transaction, the table's lock first: a second host starting at the same moment
        // waits, then replaces the function after the first committed and finds the trigger. Outside the lock,
        // two hosts' `CREATE OR REPLACE FUNCTION` raced ("tuple concurrently updated") and one failed to start.
        await db.exec(
          `DO $do$ BEGIN
            LOCK TABLE ${q(memberTable)} IN SHARE ROW EXCLUSIVE MODE;
            CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
            BEGIN
              IF TG_OP = 'INSERT' THEN
                UPDATE ${q(orgTable)} SET member_count = member_count + 1 WHERE id = NEW.organization_id;
              ELSE
                UPDATE ${q(orgTable)} SET member_count = member_count - 1 WHERE id = OLD.organization_id;
              END IF;
              RETURN NULL;
            END $fn$;
            IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = '${trigger.replace(/'/g, "''")}'
                AND tgrelid = '${q(memberTable).replace(/'/g, "''")}'::regclass) THEN
              CREATE TRIGGER ${q(trigger)} AFTER INSERT OR DELETE ON ${q(memberTable)}
                FOR EACH ROW EXECUTE FUNCTION ${fn}();
              ${recount};
            END IF;
          END $do$`,
        );
        return;
      }
      await db.transaction(async () => {
        const existing = await db.all(
          sql`select name from sqlite_master where type = 'trigger' and name = ${`${trigger}_insert`}`,
        );
        if (existing.length > 0) return;
        await db.exec(
          `CREATE TRIGGER IF NOT EXISTS ${q(`${trigger}_insert`)} AFTER INSERT ON ${q(memberTable)} BEGIN ` +
            `UPDATE ${q(orgTable)} SET member_count = member_count + 1 WHERE id = new.organization_id; END`,
        );
        await db.exec(
          `CREATE TRIGGER IF NOT EXISTS ${q(`${trigger}_delete`)} AFTER DELETE ON ${q(memberTable)} BEGIN ` +
            `UPDATE ${q(orgTable)} SET member_count = member_count - 1 WHERE id = old.organization_id; END`,
        );
        await db.exec(recount);
      });
    },
    /** The guard's membership value (kernel/ports.ts `membershipColumn`) over the outer query's user row. */
    membershipColumn(userId: AnyColumn): SQL {
      const orgId = sql.placeholder('orgId');
      const membership = sql`(SELECT ${m.role} FROM ${m} WHERE ${m.organizationId} = ${o.id} AND ${m.userId} = ${userId})`;
      return db.dialect === 'pg'
        ? sql`(SELECT json_build_array(${o.slug}, ${membership})::text FROM ${o} WHERE ${o.id} = ${orgId})`
        : sql`(SELECT json_array(${o.slug}, ${membership}) FROM ${o} WHERE ${o.id} = ${orgId})`;
    },
    /** The same value with a query of its own (personal tokens). */
    async membership(userId: string | null, orgId: string) {
      const [org] = await orm.select({ slug: o.slug }).from(o).where(eq(o.id, orgId));
      if (!org) return null;
      if (userId === null) return { slug: org.slug, role: null };
      const [row] = await orm
        .select({ role: m.role })
        .from(m)
        .where(and(eq(m.organizationId, orgId), eq(m.userId, userId)));
      return { slug: org.slug, role: row?.role ?? null };
    },
  };
}

export type OrganizationStore = ReturnType<typeof createOrganizationStore>;
