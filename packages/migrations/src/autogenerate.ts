import { diffSnapshots, snapshotOf, type Dialect } from '@svc/core/internal';
import { is } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { assertDialect, chainDir, dialectName, readChain, writeRevision } from './chain.js';
import { MigrationError } from './errors.js';
import { newRevisionId, type Revision } from './revision-file.js';

export interface RevisionOptions {
  /** Folder of the chain (`chainDir(baseDir, target, dialect)`). */
  dir: string;
  message: string;
  dialect: Dialect;
  /** The live drizzle schema (`buildAuthSchema(settings, dialect, modules)`). */
  schema: Record<string, unknown>;
  /** Diff the schema against the head snapshot; false writes an empty revision for hand-written SQL. */
  autogenerate: boolean;
  /** @default () => new Date() */
  now?: () => Date;
  /** The revision id (revisions written together for several dialects share one). @default newRevisionId(now) */
  id?: string;
  /** Whether drizzle-kit may ask on the terminal (rename or drop-and-create). @default process.stdin.isTTY */
  interactive?: boolean;
}

export interface RevisionResult {
  /** The written revision; `null` when autogenerate found nothing to do (no file is written). */
  revision: Revision | null;
  /** Head before this call. */
  parent: Revision | null;
}

type Snapshot = {
  tables?: Record<string, { columns?: Record<string, unknown> }>;
  id?: string;
  prevId?: string;
};

/**
 * Tables or columns that disappear while others appear: drizzle-kit then asks on the terminal whether it is a
 * rename. Listed so a non-interactive run can refuse instead of hanging on a prompt.
 */
export function renameAmbiguities(from: unknown, to: unknown): string[] {
  const a = (from as Snapshot).tables ?? {};
  const b = (to as Snapshot).tables ?? {};
  const out: string[] = [];
  const gone = Object.keys(a).filter((t) => !(t in b));
  const added = Object.keys(b).filter((t) => !(t in a));
  if (gone.length && added.length)
    out.push(`tables ${gone.join(', ')} removed while ${added.join(', ')} added`);
  for (const table of Object.keys(a).filter((t) => t in b)) {
    const ca = a[table]!.columns ?? {};
    const cb = b[table]!.columns ?? {};
    const goneCols = Object.keys(ca).filter((c) => !(c in cb));
    const addedCols = Object.keys(cb).filter((c) => !(c in ca));
    if (goneCols.length && addedCols.length) {
      out.push(`${table}: columns ${goneCols.join(', ')} removed while ${addedCols.join(', ')} added`);
    }
  }
  return out;
}

/** The snapshot of the head revision, or the empty snapshot of the dialect before the first revision. */
async function headSnapshot(dialect: Dialect, head: Revision | undefined): Promise<unknown> {
  return head ? head.snapshot : snapshotOf(dialect, {});
}

/** Forward and backward SQL between two snapshots, through drizzle-kit (no hand-written DDL). */
export async function diffBothWays(
  dialect: Dialect,
  from: unknown,
  to: unknown,
  interactive = Boolean(process.stdin.isTTY),
): Promise<{ upgrade: string[]; downgrade: string[] }> {
  const ambiguous = renameAmbiguities(from, to);
  if (ambiguous.length && !interactive) {
    throw new MigrationError(
      `the change is ambiguous (${ambiguous.join('; ')}): drizzle-kit must ask whether it is a rename. Run the command in a terminal, or split the change into two revisions (first remove, then add)`,
    );
  }
  const upgrade = await diffSnapshots(dialect, from, to);
  const downgrade = await diffSnapshots(dialect, to, from);
  return { upgrade, downgrade };
}

/**
 * The dialect the tables of a schema are written for (`null` for a schema without tables), or `'mixed'`. A
 * project target's `tables(settings, dialect)` that ignores `dialect` returns tables of one dialect for both.
 */
export function schemaDialect(schema: Record<string, unknown>): Dialect | 'mixed' | null {
  const found = new Set<Dialect>();
  for (const table of Object.values(schema)) {
    if (is(table, PgTable)) found.add('pg');
    else if (is(table, SQLiteTable)) found.add('sqlite');
  }
  if (found.size > 1) return 'mixed';
  return found.size === 1 ? [...found][0]! : null;
}

/** Whether every table of `schema` is a table of `dialect` (an empty schema fits every dialect). */
export function schemaFits(schema: Record<string, unknown>, dialect: Dialect): boolean {
  const found = schemaDialect(schema);
  return found === null || found === dialect;
}

/** A revision computed but not yet written (see {@link createRevisions}: every dialect is diffed first). */
interface PlannedRevision {
  dir: string;
  revision: Omit<Revision, 'file'> | null;
  parent: Revision | null;
}

async function planRevision(options: RevisionOptions): Promise<PlannedRevision> {
  if (!schemaFits(options.schema, options.dialect)) {
    throw new MigrationError(
      `the schema given for ${dialectName(options.dialect)} holds tables of another dialect: a target's tables(settings, dialect) must return ${options.dialect === 'pg' ? 'drizzle-orm/pg-core' : 'drizzle-orm/sqlite-core'} tables for '${options.dialect}'`,
    );
  }
  const chain = await readChain(options.dir);
  const head = chain.at(-1);
  assertDialect(chain, options.dialect, options.dir);
  const now = (options.now ?? (() => new Date()))();
  const id = options.id ?? newRevisionId(now);
  const from = await headSnapshot(options.dialect, head);
  let upgrade: string[] = [];
  let downgrade: string[] = [];
  let snapshot: unknown = from;
  if (options.autogenerate) {
    snapshot = await snapshotOf(options.dialect, options.schema);
    ({ upgrade, downgrade } = await diffBothWays(options.dialect, from, snapshot, options.interactive));
    if (upgrade.length === 0) return { dir: options.dir, revision: null, parent: head ?? null };
  }
  return {
    dir: options.dir,
    parent: head ?? null,
    revision: {
      id,
      parent: head?.id ?? null,
      message: options.message,
      dialect: options.dialect,
      created: now.toISOString(),
      upgrade,
      downgrade,
      // drizzle-kit snapshots carry random ids; tie them to the chain so files are stable and readable.
      snapshot: { ...(snapshot as Snapshot), id, prevId: head?.id ?? '00000000-0000-0000-0000-000000000000' },
    },
  };
}

/**
 * Writes the next revision of a chain. With `autogenerate`, the SQL is drizzle-kit's diff from the head
 * snapshot to the live schema (and back for the downgrade); when they match nothing is written
 * (SPEC "Versioning" 4: an empty autogenerated revision means nothing to do).
 */
export async function createRevision(options: RevisionOptions): Promise<RevisionResult> {
  const plan = await planRevision(options);
  const revision = plan.revision ? await writeRevision(plan.dir, plan.revision) : null;
  return { revision, parent: plan.parent };
}

export interface RevisionsOptions {
  /** Project directory (holding `migrations/`). */
  baseDir: string;
  /** Target name (`auth`, or one of the project's `migrationTargets`). */
  target: string;
  message: string;
  /** The live schema of each dialect to write a revision for: `{ sqlite: …, pg: … }`. */
  schemas: Partial<Record<Dialect, Record<string, unknown>>>;
  autogenerate: boolean;
  /** @default () => new Date() */
  now?: () => Date;
  /** @default process.stdin.isTTY */
  interactive?: boolean;
}

/** One dialect's outcome of {@link createRevisions}. */
export interface DialectRevisionResult extends RevisionResult {
  dialect: Dialect;
  /** The chain's folder (`migrations/<target>/<dialect>`, or the target folder of the older flat layout). */
  dir: string;
}

/**
 * Writes the next revision of a target for several dialects at once, under one id, each into its dialect's
 * chain (`chainDir`), so a project keeps the SQL of its development and production databases in step
 * (docs/cli.md "Layout"). Every diff is computed before any file is written: an ambiguous change in one
 * dialect writes nothing for the others either.
 * @example
 * await createRevisions({ baseDir, target: 'auth', message: 'upgrade svc', autogenerate: true,
 *   schemas: { sqlite: buildAuthSchema(settings, 'sqlite'), pg: buildAuthSchema(settings, 'pg') } });
 */
export async function createRevisions(options: RevisionsOptions): Promise<DialectRevisionResult[]> {
  const now = (options.now ?? (() => new Date()))();
  const id = newRevisionId(now);
  const plans: (PlannedRevision & { dialect: Dialect })[] = [];
  for (const [dialect, schema] of Object.entries(options.schemas) as [Dialect, Record<string, unknown>][]) {
    const dir = await chainDir(options.baseDir, options.target, dialect);
    const plan = await planRevision({
      dir,
      message: options.message,
      dialect,
      schema,
      autogenerate: options.autogenerate,
      now: () => now,
      id,
      interactive: options.interactive,
    });
    plans.push({ ...plan, dialect });
  }
  const results: DialectRevisionResult[] = [];
  for (const plan of plans) {
    const revision = plan.revision ? await writeRevision(plan.dir, plan.revision) : null;
    results.push({ dialect: plan.dialect, dir: plan.dir, revision, parent: plan.parent });
  }
  return results;
}

export interface CheckResult {
  /** True when the live schema equals the head snapshot. */
  clean: boolean;
  head: Revision | null;
  /** The statements a new autogenerated revision would hold. */
  statements: string[];
}

/** Compares the live schema with the head revision's snapshot (`svc migrations check`, for CI). */
export async function checkSchema(options: {
  dir: string;
  dialect: Dialect;
  schema: Record<string, unknown>;
}): Promise<CheckResult> {
  const chain = await readChain(options.dir);
  const head = chain.at(-1) ?? null;
  assertDialect(chain, options.dialect, options.dir);
  const from = await headSnapshot(options.dialect, head ?? undefined);
  const to = await snapshotOf(options.dialect, options.schema);
  const statements = renameAmbiguities(from, to).length
    ? ['(ambiguous rename)']
    : await diffSnapshots(options.dialect, from, to);
  return { clean: statements.length === 0, head, statements };
}
