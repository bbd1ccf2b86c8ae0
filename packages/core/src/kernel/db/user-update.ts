import { randomUUID } from 'node:crypto';
import { and, eq, getTableColumns, isNull, type SQL } from 'drizzle-orm';
import type { WebhookOutbox } from '../ports.js';
import { toUserOut } from '../user-out.js';
import type { Database, Orm } from './database.js';
import { placeholderFor } from './sql.js';
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
  run: (change: SQL, values: Record<string, unknown>) => Promise<Record<string, unknown>[]>;
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
    run: (change, values) =>
      recordWith(change, values, 'user.updated', toUserOut({ ...expected, ...changes })),
  };
}

/** Most update statements kept per user table (a shape is the fields set and which guarded fields are null). */
const KEPT_SHAPES = 256;
const shapes = new WeakMap<UserTable, Map<string, SQL>>();

/**
 * The update of one shape, built once with placeholders and kept (kernel/db/sql.ts `compiledWith`: drizzle's
 * building and compiling of this statement cost more than the rest of the request, docs/performance.md
 * "Webhooks"): sets `set_<field>` of each field in `set`, for the user `id`, while each field of `guarded`
 * still holds `was_<field>` (or is null, for those `isNull` says).
 */
function changeStatement(
  db: Database,
  user: UserTable,
  set: readonly (keyof UserRow)[],
  guarded: readonly (typeof SHOWN_FIELDS)[number][],
  isNullNow: (field: (typeof SHOWN_FIELDS)[number]) => boolean,
): SQL {
  const key = `${set.join(',')}|${guarded.map((field) => (isNullNow(field) ? `${field}=null` : field)).join(',')}`;
  let kept = shapes.get(user);
  if (!kept) shapes.set(user, (kept = new Map()));
  const hit = kept.get(key);
  if (hit) return hit;
  const statement = db.orm
    .update(user)
    .set(Object.fromEntries(set.map((field) => [field, placeholderFor(user[field], `set_${field}`)])))
    .where(
      and(
        eq(user.id, placeholderFor(user.id, 'id')),
        ...guarded.map((field) =>
          isNullNow(field)
            ? isNull(user[field])
            : eq(user[field], placeholderFor(user[field], `was_${field}`)),
        ),
      ),
    )
    .returning()
    .getSQL();
  if (kept.size >= KEPT_SHAPES) kept.clear();
  kept.set(key, statement);
  return statement;
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
  const set = fieldsSet(changes);
  const guarded = SHOWN_FIELDS.filter((field) => !(field in changes));
  const values = valuesOf(id, changes, set);
  for (const field of guarded) values[`was_${field}`] = together.expected[field];
  const change = changeStatement(db, user, set, guarded, (field) => together.expected[field] === null);
  const [raw] = await together.run(change, values);
  return raw ? userRowOf(user, raw) : undefined;
}

/** Insert statements of a user, kept per user table and set of columns given (see {@link changeStatement}). */
const inserts = new WeakMap<UserTable, Map<string, SQL>>();

/**
 * A new user and their `user.created` in one statement (PostgreSQL, webhooks on: `WebhookOutbox.recordWith`),
 * where a transaction of the insert and the outbox took four round trips (BEGIN, the insert, the outbox,
 * COMMIT) while its outbox rows held their endpoint's row lock (docs/performance.md "Webhooks"). The event
 * shows the user as inserted, so the fields it shows are given here rather than left to the table's defaults
 * (the same values as those defaults); the row comes back as the database stored it. A unique violation (a
 * parallel insert of the name or the address) throws as the insert alone would, and stores no event.
 */
async function insertUserTogether(
  db: Database,
  user: UserTable,
  values: UserTable['$inferInsert'],
  recordWith: NonNullable<WebhookOutbox['recordWith']>,
): Promise<UserRow> {
  const given = Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
  const row = {
    id: randomUUID(),
    email: null,
    firstName: '',
    lastName: '',
    isActive: true,
    isStaff: false,
    isSuperuser: false,
    emailVerifiedAt: null,
    lastLoginAt: null,
    createdAt: new Date(),
    ...given,
  } as UserTable['$inferInsert'] & UserRow;
  const keys = (Object.keys(row) as (keyof UserRow)[]).sort();
  const shape = keys.join(',');
  let kept = inserts.get(user);
  if (!kept) inserts.set(user, (kept = new Map()));
  let statement = kept.get(shape);
  if (!statement) {
    statement = db.orm
      .insert(user)
      // Placeholders stand for every value given (drizzle types `values` by the keys a row must have).
      .values(
        Object.fromEntries(
          keys.map((key) => [key, placeholderFor(user[key], `v_${key}`)]),
        ) as unknown as UserTable['$inferInsert'],
      )
      .returning()
      .getSQL();
    if (kept.size >= KEPT_SHAPES) kept.clear();
    kept.set(shape, statement);
  }
  const [raw] = await recordWith(
    statement,
    Object.fromEntries(keys.map((key) => [`v_${key}`, row[key]])),
    'user.created',
    toUserOut(row),
  );
  return userRowOf(user, raw!);
}

/** What a new user's insert writes besides the row, for {@link insertUser}. */
export interface UserInsertWrites {
  /** The `user.created` event in the insert's transaction (`WebhookOutbox.record`); absent while webhooks are off. */
  record?: (tx: Orm, row: UserRow) => Promise<void>;
  /** PostgreSQL with webhooks on: the insert and that event in one statement instead, when nothing else is written. */
  recordWith?: WebhookOutbox['recordWith'];
  /** Other rows of the new user, in the insert's transaction (an invitation's groups). */
  alsoWrite?: (tx: Orm, row: UserRow) => Promise<void>;
}

/**
 * A new user, with what `writes` adds, in as few round trips as that allows: the insert alone when nothing else
 * is written; the insert and its event in one statement when `recordWith` can (see {@link insertUserTogether});
 * else one transaction of the insert, the other rows and the event.
 */
export async function insertUser(
  db: Database,
  user: UserTable,
  values: UserTable['$inferInsert'],
  { record, recordWith, alsoWrite }: UserInsertWrites = {},
): Promise<UserRow> {
  if (!record && !alsoWrite) return (await db.orm.insert(user).values(values).returning())[0]!;
  if (record && recordWith && !alsoWrite) return insertUserTogether(db, user, values, recordWith);
  return db.transaction(async (tx) => {
    const [row] = await tx.insert(user).values(values).returning();
    await alsoWrite?.(tx, row!);
    await record?.(tx, row!);
    return row!;
  });
}

/**
 * `changes` to the user `id` (no event): the updated row, or undefined when there is no such user. The
 * statement of each set of fields is built once and kept (see {@link changeStatement}), on both dialects.
 */
export async function updateUserRow(
  db: Database,
  user: UserTable,
  id: string,
  changes: Partial<UserRow>,
): Promise<UserRow | undefined> {
  const set = fieldsSet(changes);
  const [raw] = await db.allPrepared(
    changeStatement(db, user, set, [], () => false),
    valuesOf(id, changes, set),
  );
  return raw ? userRowOf(user, raw) : undefined;
}

/** The placeholder values of {@link changeStatement}: the user's id and each field `set` takes from `changes`. */
function valuesOf(
  id: string,
  changes: Partial<UserRow>,
  set: readonly (keyof UserRow)[],
): Record<string, unknown> {
  const values: Record<string, unknown> = { id };
  for (const field of set) values[`set_${field}`] = changes[field];
  return values;
}

/** The fields `changes` sets, in one order (drizzle's `set` leaves out an undefined value). */
const fieldsSet = (changes: Partial<UserRow>) =>
  (Object.keys(changes) as (keyof UserRow)[]).filter((field) => changes[field] !== undefined).sort();

/** A user's row as the driver returns it from a hand-written statement (stored column names), mapped as drizzle maps one. */
function userRowOf(user: UserTable, raw: Record<string, unknown>): UserRow {
  return Object.fromEntries(
    Object.entries(getTableColumns(user)).map(([key, column]) => {
      const value = raw[column.name];
      return [key, value === null || value === undefined ? null : column.mapFromDriverValue(value)];
    }),
  ) as UserRow;
}
