import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { tableName, type Settings } from '../config/schema.js';
import { defineModule } from '../module.js';
import { defineRouter } from '../router.js';
import {
  describeEachDatabase,
  startTestApp,
  type LoggedInClient,
  type TestApp,
} from '../../testing/index.js';
import { defineTable, type Dialect } from './define-table.js';
import { coreTables } from './tables.js';

// docs/modules.md "Tables": a project module's tables, declared once with defineTable, created and queried on
// both databases by one store without a cast; each column kind becomes the type of the dialect's mapping.
function invoiceTables(settings: Settings, dialect: Dialect) {
  const { user } = coreTables(settings, dialect);
  const name = tableName(settings, 'invoice');
  const invoice = defineTable(
    dialect,
    name,
    (c) => ({
      id: c.uuid('id').primaryKey().$defaultFn(randomUUID),
      ownerId: c
        .uuid('owner_id')
        .notNull()
        .references(() => user.id, { onDelete: 'cascade' }),
      title: c.text('title', { length: 200 }).notNull(),
      memo: c.text('memo').notNull().default(''),
      quantity: c.integer('quantity').notNull(),
      amountCents: c.bigint('amount_cents').notNull(),
      paid: c.boolean('paid').notNull().default(false),
      dueAt: c.timestamp('due_at'),
      lines: c.json<{ text: string; cents: number }[]>('lines').notNull(),
    }),
    (t, parts) => [
      parts.index(`${name}_owner_idx`).on(t.ownerId, t.dueAt),
      parts.uniqueIndex(`${name}_title_lower_idx`).on(sql`lower(${t.title})`),
    ],
  );
  const invoiceTag = defineTable(
    dialect,
    tableName(settings, 'invoice_tag'),
    (c) => ({
      invoiceId: c
        .uuid('invoice_id')
        .notNull()
        .references(() => invoice.id, { onDelete: 'cascade' }),
      tag: c.text('tag', { length: 32 }).notNull(),
    }),
    (t, parts) => [parts.primaryKey(t.invoiceId, t.tag)],
  );
  const invoicePayment = defineTable(dialect, tableName(settings, 'invoice_payment'), (c) => ({
    id: c.bigserial('id'),
    invoiceId: c
      .uuid('invoice_id')
      .notNull()
      .references(() => invoice.id, { onDelete: 'cascade' }),
    at: c.timestamp('at').notNull(),
  }));
  const counter = defineTable(dialect, tableName(settings, 'invoice_counter'), (c) => ({
    id: c.serial('id'),
    note: c.text('note', { length: 20 }),
  }));
  return { invoice, invoiceTag, invoicePayment, counter };
}

const Invoice = z.object({
  id: z.string(),
  payments: z.array(z.number()),
  title: z.string(),
  quantity: z.number(),
  amountCents: z.number(),
  paid: z.boolean(),
  dueAt: z.string().nullable(),
  lines: z.array(z.object({ text: z.string(), cents: z.number() })),
  tags: z.array(z.string()),
});

const invoicesModule = defineModule({
  name: 'invoices',
  tables: invoiceTables,
  setup({ tables, authDb }) {
    const { invoice, invoiceTag, invoicePayment } = tables;
    const out = async (row: typeof invoice.$inferSelect) => ({
      id: row.id,
      payments: (
        await authDb.orm
          .select({ id: invoicePayment.id })
          .from(invoicePayment)
          .where(eq(invoicePayment.invoiceId, row.id))
          .orderBy(invoicePayment.id)
      ).map((r) => r.id),
      title: row.title,
      quantity: row.quantity,
      amountCents: row.amountCents,
      paid: row.paid,
      dueAt: row.dueAt?.toISOString() ?? null,
      lines: row.lines,
      tags: (
        await authDb.orm
          .select({ tag: invoiceTag.tag })
          .from(invoiceTag)
          .where(eq(invoiceTag.invoiceId, row.id))
      )
        .map((r) => r.tag)
        .sort(),
    });
    const router = defineRouter({ prefix: '/invoices' });
    router.post(
      '/',
      {
        body: z.object({
          title: z.string().min(1).max(200),
          quantity: z.number().int(),
          amountCents: z.number().int(),
          dueAt: z.iso.datetime().optional(),
          lines: z.array(z.object({ text: z.string(), cents: z.number().int() })),
          tags: z.array(z.string().max(32)).default([]),
        }),
        response: Invoice,
        status: 201,
      },
      async (ctx) => {
        const [row] = await authDb.orm
          .insert(invoice)
          .values({
            ownerId: ctx.user.id,
            title: ctx.body.title,
            quantity: ctx.body.quantity,
            amountCents: ctx.body.amountCents,
            dueAt: ctx.body.dueAt ? new Date(ctx.body.dueAt) : null,
            lines: ctx.body.lines,
          })
          .returning();
        if (ctx.body.tags.length > 0)
          await authDb.orm
            .insert(invoiceTag)
            .values(ctx.body.tags.map((tag) => ({ invoiceId: row!.id, tag })));
        return out(row!);
      },
    );
    router.post('/:id/pay', { params: z.object({ id: z.string() }), response: Invoice }, async (ctx) => {
      const [row] = await authDb.orm
        .update(invoice)
        .set({ paid: true })
        .where(eq(invoice.id, ctx.params.id))
        .returning();
      await authDb.orm.insert(invoicePayment).values({ invoiceId: row!.id, at: new Date() });
      return out(row!);
    });
    router.get('/', { response: z.array(Invoice) }, async () =>
      Promise.all((await authDb.orm.select().from(invoice).orderBy(invoice.title)).map(out)),
    );
    return { routers: [router] };
  },
});

/** The columns of `table` as the database stores them: `name type`, in lower case. */
async function columnTypes(app: TestApp, table: string): Promise<string[]> {
  const db = app.app.runtime.authDb;
  const rows =
    db.dialect === 'pg'
      ? await db.all<{ name: string; type: string }>(
          sql`SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_name = ${table} ORDER BY ordinal_position`,
        )
      : await db.all<{ name: string; type: string }>(sql`SELECT name, type FROM pragma_table_info(${table})`);
  return rows.map((r) => `${r.name} ${r.type.toLowerCase()}`);
}

describeEachDatabase('a project module with tables declared once (defineTable)', (database) => {
  let app: TestApp;
  let alice: LoggedInClient;
  let aliceId: string;

  beforeAll(async () => {
    app = await startTestApp({ database, modules: [invoicesModule], settings: { table_prefix: 'acme_' } });
    const user = await app.createUser({ username: 'alice' });
    aliceId = user.id;
    alice = await app.loginAs(user);
  });
  afterAll(() => app.close());

  it('creates the tables under the configured prefix with the dialect types of docs/modules.md', async () => {
    const expected =
      database.dialect === 'pg'
        ? [
            'id uuid',
            'owner_id uuid',
            'title character varying',
            'memo text',
            'quantity integer',
            'amount_cents bigint',
            'paid boolean',
            'due_at timestamp with time zone',
            'lines jsonb',
          ]
        : [
            'id text',
            'owner_id text',
            'title text(200)',
            'memo text',
            'quantity integer',
            'amount_cents integer',
            'paid integer',
            'due_at integer',
            'lines text',
          ];
    expect(await columnTypes(app, 'acme_invoice')).toEqual(expected);
    expect(await columnTypes(app, 'acme_invoice_payment')).toEqual(
      database.dialect === 'pg'
        ? ['id bigint', 'invoice_id uuid', 'at timestamp with time zone']
        : ['id integer', 'invoice_id text', 'at integer'],
    );
    expect(await columnTypes(app, 'acme_invoice_counter')).toEqual(
      database.dialect === 'pg' ? ['id integer', 'note character varying'] : ['id integer', 'note text(20)'],
    );
  });

  it('writes and reads every column kind through one store, the same values on both databases', async () => {
    const body = {
      title: 'Consulting',
      quantity: 3,
      amountCents: 2 ** 40, // beyond a 32-bit integer: bigint on PostgreSQL, still a JavaScript number
      dueAt: '2027-01-31T12:00:00.000Z',
      lines: [{ text: 'hours', cents: 2 ** 40 }],
      tags: ['q1', 'acme'],
    };
    const created = await alice.post('/api/invoices/', body);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      payments: [],
      title: 'Consulting',
      quantity: 3,
      amountCents: 2 ** 40,
      paid: false,
      dueAt: '2027-01-31T12:00:00.000Z',
      lines: [{ text: 'hours', cents: 2 ** 40 }],
      tags: ['acme', 'q1'],
    });
    const id = (created.body.data as { id: string }).id;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const paid = await alice.post(`/api/invoices/${id}/pay`, {});
    expect(paid.status).toBe(200);
    expect(paid.body.data).toMatchObject({ paid: true, payments: [1] });

    const { counter } = invoiceTables(app.app.runtime.settings, app.app.runtime.authDb.dialect);
    const counted = await app.app.runtime.authDb.orm
      .insert(counter)
      .values([{ note: 'a' }, {}])
      .returning();
    expect(counted).toEqual([
      { id: 1, note: 'a' },
      { id: 2, note: null },
    ]);

    // The stored effect, read past the module: a boolean and a timestamp as the dialect stores them.
    const db = app.app.runtime.authDb;
    const [raw] = await db.all<{ paid: unknown; due_at: unknown; owner_id: string }>(
      sql`SELECT paid, due_at, owner_id FROM acme_invoice WHERE id = ${id}`,
    );
    expect(raw!.owner_id).toBe(aliceId);
    if (database.dialect === 'pg') {
      expect(raw!.paid).toBe(true);
      expect(new Date(raw!.due_at as string).toISOString()).toBe(body.dueAt);
    } else {
      expect(raw!.paid).toBe(1);
      expect(raw!.due_at).toBe(Date.parse(body.dueAt));
    }
  });

  it('keeps the indexes and keys it declares: a unique expression index, a composite primary key, cascades', async () => {
    const again = await alice.post('/api/invoices/', {
      title: 'CONSULTING', // lower(title) is unique
      quantity: 1,
      amountCents: 1,
      lines: [],
    });
    expect(again.status).toBe(409);
    expect(again.body.detail[0]).toMatchObject({ code: 'db.conflict' });

    const db = app.app.runtime.authDb;
    const { invoice, invoiceTag } = invoiceTables(app.app.runtime.settings, db.dialect);
    const [first] = await db.orm.select().from(invoice).where(eq(invoice.title, 'Consulting'));
    const tagsOf = async () =>
      (await db.orm.select().from(invoiceTag).where(eq(invoiceTag.invoiceId, first!.id)))
        .map((row) => row.tag)
        .sort();
    expect(await tagsOf()).toEqual(['acme', 'q1']);
    // The composite primary key (invoice_id, tag) refuses the same pair again, and nothing is added. Read by the
    // error's code, not `rejects.toThrow()`: better-sqlite3's native addon keeps the SqliteError class of the first
    // test file that loaded it in a jest worker, so in a later file the error is not an `Error` of that file's realm.
    const refused = await db.orm
      .insert(invoiceTag)
      .values({ invoiceId: first!.id, tag: 'q1' })
      .then(
        () => 'inserted',
        (error: { code?: string; cause?: { code?: string } }) => String(error.code ?? error.cause?.code),
      );
    expect(refused).toBe(database.dialect === 'pg' ? '23505' : 'SQLITE_CONSTRAINT_PRIMARYKEY');
    expect(await tagsOf()).toEqual(['acme', 'q1']);

    // Deleting the owner takes the invoice along, and the invoice its tags (references with onDelete).
    const { user } = coreTables(app.app.runtime.settings, db.dialect);
    await db.orm.delete(user).where(eq(user.id, aliceId));
    expect(await db.orm.select().from(invoice)).toEqual([]);
    expect(await db.orm.select().from(invoiceTag)).toEqual([]);
  });
});
