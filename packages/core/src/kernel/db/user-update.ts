import { and, eq, getTableColumns, isNull, type SQL } from 'drizzle-orm';
import type { WebhookOutbox } from '../ports.js';
import { toUserOut } from '../user-out.js';
import type { Database, Orm } from './database.js';
import type { CoreTables } from './tables.js';

type UserTable = CoreTables['user'];
type UserRow = UserTable['$inferSelect'];

/**
 * The stored fields of a user that its public shape shows and a change may touch (`toUserOut`; the id and the
 * creation time never change).
 */
const SHOWN_FIELDS = [
  'username',
  'email',
  'firstName',
  'lastName',
  'isActive',
  'isStaff',
  'isSuperuser',
  'emailVerifiedAt',
  'lastLoginAt',
] as const satisfies readonly (keyof UserRow)[];

/**
 * A user's update and its webhook event in one statement (PostgreSQL; `WebhookOutbox.recordWith`): `run`
 * wraps the update's statement with the event's; `expected` is the row the event's data was built from (with
 * the changes), and the update applies only while the row still holds it.
 */
export interface UpdateTogether {
  expected: UserRow;
  run: (orm: Orm, change: SQL) => Promise<Record<string, unknown>[]>;
}

/**
 * What a store needs to write `changes` to the user read as `expected` and their `user.updated` in one statement,
 * when the outbox can (`recordWith`: PostgreSQL, webhooks on); undefined otherwise, and the store runs its
 * transaction. The event's data is the user as read with the changes.
 */
export function userUpdatedTogether(
  webhooks: WebhookOutbox,
  expected: UserRow,
  changes: Partial<UserRow>,
): UpdateTogether | undefined {
  const recordWith = webhooks.recordWith;
  if (!recordWith) return undefined;
  return {
    expected,
    run: (orm, change) => recordWith(orm, change, 'user.updated', toUserOut({ ...expected, ...changes })),
  };
}

/**
 * `changes` to the user `id` and their event in one statement instead of a transaction of
 * the update and the outbox (docs/performance.md "Webhooks": three round trips fewer while the row is locked).
 * The updated row, or undefined when the update did not apply: the user is gone, or a field the event shows
 * and the update does not set has changed since `expected` was read (the event would describe the user
 * wrongly); the caller then runs its transaction, with the row as it is by then. A field the update sets is
 * what the event says whatever it held before, so another edit of it in between does not matter.
 */
export async function updateUserTogether(
  db: Database,
  user: UserTable,
  id: string,
  changes: Partial<UserRow>,
  together: UpdateTogether,
): Promise<UserRow | undefined> {
  const unchanged = SHOWN_FIELDS.filter((field) => !(field in changes)).map((field) => {
    const value = together.expected[field];
    return value === null ? isNull(user[field]) : eq(user[field], value);
  });
  const change = db.orm
    .update(user)
    .set(changes)
    .where(and(eq(user.id, id), ...unchanged))
    .returning();
  const [raw] = await together.run(db.orm, change.getSQL());
  if (!raw) return undefined;
  // The row as the driver returns it from hand-written SQL (stored column names), mapped as drizzle maps one.
  return Object.fromEntries(
    Object.entries(getTableColumns(user)).map(([key, column]) => {
      const value = raw[column.name];
      return [key, value === null || value === undefined ? null : column.mapFromDriverValue(value)];
    }),
  ) as UserRow;
}
