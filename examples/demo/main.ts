import {
  createApp,
  defineRouter,
  defineSettingsSection,
  defineTable,
  SvcError,
  z,
  type Database,
  type Dialect,
} from '@svc/core';
import { desc, eq } from 'drizzle-orm';

/**
 * The demo project: a small notes API on top of svc's user system. Its notes live in the main database
 * in a table of its own, migrated by `svc migrations upgrade --target-name notes`.
 * Run it from the repository root with `pnpm demo`.
 */

// --- the project's own table, declared once for both dialects ----------------------------------------
const noteTable = (dialect: Dialect) =>
  defineTable(dialect, 'demo_note', (c) => ({
    id: c.serial('id'),
    text: c.text('text').notNull(),
    archived: c.boolean('archived').notNull().default(false),
    authorId: c.uuid('author_id').notNull(),
    createdAt: c
      .timestamp('created_at')
      .notNull()
      .$defaultFn(() => new Date()),
  }));
type NoteTable = ReturnType<typeof noteTable>;
const noteTables: Record<Dialect, NoteTable> = { sqlite: noteTable('sqlite'), pg: noteTable('pg') };
const notesTable = (db: Pick<Database, 'dialect'>) => noteTables[db.dialect];

const Note = z.object({ id: z.number(), text: z.string(), archived: z.boolean(), authorId: z.string() });
const toNote = (row: NoteTable['$inferSelect']) => ({
  id: row.id,
  text: row.text,
  archived: row.archived,
  authorId: row.authorId,
});

// --- routes --------------------------------------------------------------------------------------------
const notes = defineRouter({ prefix: '/notes', tags: ['notes'], permissions: ['notes.read'] });

// The list is the hottest query: built and prepared once per database, then only run. drizzle otherwise
// builds the SQL of a query on every call, about 50 µs here, more than SQLite takes to answer it. The name
// makes it a prepared statement on PostgreSQL too (drizzle sends a query prepared without one unnamed, to
// be parsed and planned on every call).
const listQueries = new WeakMap<Database, { execute(): Promise<NoteTable['$inferSelect'][]> }>();
function listNotes(db: Database) {
  let query = listQueries.get(db);
  if (!query) {
    const table = notesTable(db);
    const select = db.orm.select().from(table).orderBy(desc(table.id)).limit(100);
    // (typed as the SQLite builder, whose prepare() takes no name; the PostgreSQL one's does)
    query = (select.prepare as (name: string) => ReturnType<typeof select.prepare>).call(
      select,
      'demo_notes_list',
    );
    listQueries.set(db, query);
  }
  return query.execute();
}

notes.get('/', { summary: 'List notes', response: z.array(Note) }, async (ctx) =>
  (await listNotes(ctx.db)).map(toNote),
);

notes.post(
  '/',
  {
    summary: 'Create a note',
    permissions: ['notes.write'],
    body: z.object({ text: z.string().min(1).max(2000) }),
    response: Note,
    status: 201,
    logAs: 'note created by {username}',
  },
  async (ctx) => {
    const [row] = await ctx.db.orm
      .insert(notesTable(ctx.db))
      .values({ text: ctx.body.text, authorId: ctx.user.id })
      .returning();
    ctx.emit('note_created', { noteId: row!.id }, { kind: 'permission', codename: 'notes.read' });
    return toNote(row!);
  },
);

notes.post(
  '/:noteId/archive',
  {
    summary: 'Archive a note',
    permissions: ['notes.write'],
    params: z.object({ noteId: z.coerce.number().int() }),
    response: Note,
    logAs: 'archived {noteId} by {username}',
  },
  async (ctx) => {
    const table = notesTable(ctx.db);
    const [row] = await ctx.db.orm
      .update(table)
      .set({ archived: true })
      .where(eq(table.id, ctx.params.noteId))
      .returning();
    if (!row)
      throw new SvcError('notes.not_found', {
        status: 404,
        loc: ['path', 'noteId'],
        message: 'No such note.',
      });
    return toNote(row);
  },
);

// SPEC-3 §2 (docs/organizations.md): the same list inside an organization. The request names it
// (`X-Organization-Id`), the caller's role in it must grant `notes.read` (organizationRoles below), and the
// membership is read in the guard's one query. The notes themselves are not per organization in this demo.
const orgNotes = defineRouter({
  prefix: '/org-notes',
  tags: ['notes'],
  organizationPermissions: ['notes.read'],
});
orgNotes.get('/', { summary: 'List notes (in an organization)', response: z.array(Note) }, async (ctx) =>
  (await listNotes(ctx.db)).map(toNote),
);

// Public inside a protected router: no token needed for /open/ping; /notes/about still needs notes.read.
const open = defineRouter({ prefix: '/open', tags: ['open'] });
open.get('/ping', { public: true, summary: 'Public ping' }, async () => ({ pong: true }));

// --- a settings section of the project's own ---------------------------------------------------------
const notifications = defineSettingsSection({
  name: 'notifications',
  title: 'Notifications',
  icon: 'bell',
  route: '/settings/notifications',
  fields: {
    emailDigest: {
      type: 'enum',
      values: ['off', 'daily', 'weekly'],
      default: 'daily',
      label: 'Email digest',
    },
    maxItems: { type: 'integer', ge: 1, le: 50, default: 10, label: 'Items per digest' },
  },
});

export const app = createApp({
  routers: [notes, open, orgNotes],
  // SPEC-3 §2: what each organization role grants (owners hold every listed codename).
  organizationRoles: { member: ['notes.read'], admin: ['notes.read', 'notes.write'] },
  // The example frontend (examples/client-demo), built by the start script, on the API's own origin:
  // http://127.0.0.1:8000/app/ (docs/client.md "Serving the frontend"). Relative to this project's directory.
  staticFiles: [{ path: '/app', dir: '../client-demo/dist' }],
  settingsSections: [notifications],
  migrationTargets: {
    notes: {
      database: 'main',
      tables: (_settings, dialect) => ({ notes: noteTables[dialect] }),
    },
  },
  // A real project sends mail or SMS here; the demo writes the code to the log so you can log in with MFA.
  mfaSender: {
    async sendEmailCode({ email, otpCode, expiresInMinutes }) {
      process.stderr.write(
        `demo mfaSender: email code for ${email}: ${otpCode} (valid ${expiresInMinutes} min)\n`,
      );
    },
    async sendSmsCode({ phoneNumber, otpCode, expiresInMinutes }) {
      process.stderr.write(
        `demo mfaSender: SMS code for ${phoneNumber}: ${otpCode} (valid ${expiresInMinutes} min)\n`,
      );
    },
  },
});
