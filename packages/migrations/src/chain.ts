import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Dialect } from '@svc/core/internal';
import { MigrationError } from './errors.js';
import { formatRevision, parseRevision, revisionFileNames, type Revision } from './revision-file.js';

/** Folder of the migrations of all targets, inside the project directory. */
export const MIGRATIONS_DIR = 'migrations';
/** The target of the core's auth tables (SPEC "Command-line interface": `--target-name` default auth). */
export const DEFAULT_TARGET = 'auth';

/** The dialects a revision is written for; each has its own chain (SQL is dialect-specific). */
export const DIALECTS: readonly Dialect[] = ['sqlite', 'pg'];

/** `<baseDir>/migrations/<target>`: the target's folder, holding one folder per dialect. */
export function targetDir(baseDir: string, target: string = DEFAULT_TARGET): string {
  if (!/^[A-Za-z0-9_-]+$/.test(target)) {
    throw new MigrationError(`invalid target name '${target}': use letters, digits, '_' and '-'`);
  }
  return join(baseDir, MIGRATIONS_DIR, target);
}

/** `<baseDir>/migrations/<target>/<dialect>`: where the revisions of one dialect are written. */
export function dialectDir(baseDir: string, target: string, dialect: Dialect): string {
  return join(targetDir(baseDir, target), dialect);
}

/**
 * The folder holding the chain of `dialect` for a target, chosen from the database's dialect so that one
 * checkout migrates a file database in development and PostgreSQL in production (docs/cli.md "Layout"):
 * `migrations/<target>/<dialect>/`. A target folder that holds revision files itself (the layout before
 * folders per dialect: `migrations/auth/*.sql`) still serves the dialect its files were written for.
 */
export async function chainDir(baseDir: string, target: string, dialect: Dialect): Promise<string> {
  const own = dialectDir(baseDir, target, dialect);
  if (existsSync(own)) return own;
  const flat = targetDir(baseDir, target);
  const dialects = await flatDialects(flat);
  return dialects.includes(dialect) ? flat : own;
}

/** The dialects of the revision files lying directly in a target folder (the layout before per-dialect folders). */
export async function flatDialects(dir: string): Promise<Dialect[]> {
  if (!existsSync(dir)) return [];
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql'));
  const found = new Set<Dialect>();
  for (const file of files) {
    found.add(parseRevision(await readFile(join(dir, file), 'utf8'), file).dialect);
  }
  return [...found];
}

/** Every revision in `dir` (empty when the folder does not exist), in no particular order. */
export async function readRevisions(dir: string): Promise<Revision[]> {
  if (!existsSync(dir)) return [];
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  return Promise.all(
    files.map(async (file) => {
      const parsed = parseRevision(await readFile(join(dir, file), 'utf8'), file);
      let snapshot: unknown;
      try {
        snapshot = JSON.parse(await readFile(join(dir, parsed.snapshotFile), 'utf8'));
      } catch (error) {
        throw new MigrationError(
          `${file}: cannot read its snapshot ${parsed.snapshotFile}: ${(error as Error).message}`,
        );
      }
      const { snapshotFile: _, ...revision } = parsed;
      return { ...revision, snapshot };
    }),
  );
}

/**
 * Orders revisions from the first (parent base) to the head. Refuses duplicates, unknown parents and
 * branches (two revisions with the same parent), naming the files concerned.
 */
export function orderChain(revisions: Revision[]): Revision[] {
  const byId = new Map<string, Revision>();
  const byParent = new Map<string | null, Revision>();
  for (const revision of revisions) {
    const dup = byId.get(revision.id);
    if (dup)
      throw new MigrationError(`revision ${revision.id} exists twice: ${dup.file} and ${revision.file}`);
    byId.set(revision.id, revision);
  }
  for (const revision of revisions) {
    if (revision.parent !== null && !byId.has(revision.parent)) {
      throw new MigrationError(`${revision.file}: its parent ${revision.parent} does not exist`);
    }
    const sibling = byParent.get(revision.parent);
    if (sibling) {
      throw new MigrationError(
        `${sibling.file} and ${revision.file} both follow ${revision.parent ?? 'base'}: the chain has two heads; set the parent of the later one to the other`,
      );
    }
    byParent.set(revision.parent, revision);
  }
  const chain: Revision[] = [];
  for (let next = byParent.get(null); next; next = byParent.get(next.id)) chain.push(next);
  if (chain.length !== revisions.length) {
    throw new MigrationError('the revisions do not form one chain from base (a parent cycle?)');
  }
  return chain;
}

/** The ordered chain of a target folder. */
export async function readChain(dir: string): Promise<Revision[]> {
  return orderChain(await readRevisions(dir));
}

/**
 * Refuses a chain holding a revision written for another dialect than the database's: revisions are
 * dialect-specific SQL, and each dialect has its own folder (`migrations/<target>/<dialect>/`).
 */
export function assertDialect(chain: Revision[], dialect: Dialect, dir?: string): void {
  const other = chain.find((r) => r.dialect !== dialect);
  if (other) {
    const where = dir ? `${shortPath(join(dir, other.file))}` : other.file;
    throw new MigrationError(
      `revision ${other.id} (${where}) was generated for ${dialectName(other.dialect)} but the database is ${dialectName(dialect)}: revisions hold dialect-specific SQL and each dialect has its own folder, migrations/<target>/sqlite/ and migrations/<target>/pg/; move the file to the folder of its dialect (\`svc migrations revision --autogenerate\` writes both)`,
    );
  }
}

/** A path relative to the working directory when it lies below it (messages name files as a user typed them). */
export function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

export function dialectName(dialect: Dialect): string {
  return dialect === 'pg' ? 'PostgreSQL' : 'SQLite';
}

/**
 * Position in the chain of a revision reference: `base` is -1, `head` the last, otherwise an id or a unique
 * id prefix.
 */
export function resolveRevision(chain: Revision[], ref: string): number {
  if (ref === 'base') return -1;
  if (ref === 'head') return chain.length - 1;
  const exact = chain.findIndex((r) => r.id === ref);
  if (exact >= 0) return exact;
  const matches = chain.map((r, i) => [r, i] as const).filter(([r]) => r.id.startsWith(ref));
  if (matches.length === 1) return matches[0]![1];
  if (matches.length > 1)
    throw new MigrationError(`revision '${ref}' is ambiguous: ${matches.map(([r]) => r.id).join(', ')}`);
  throw new MigrationError(`unknown revision '${ref}'`);
}

/** Writes a revision's `.sql` and snapshot files; returns the `.sql` path. */
export async function writeRevision(dir: string, revision: Omit<Revision, 'file'>): Promise<Revision> {
  const names = revisionFileNames(revision.id, revision.message);
  await mkdir(dir, { recursive: true });
  const snapshot = { ...(revision.snapshot as Record<string, unknown>) };
  await writeFile(join(dir, names.snapshot), JSON.stringify(snapshot, null, 2) + '\n', { flag: 'wx' });
  await writeFile(join(dir, names.sql), formatRevision(revision, names.snapshot), { flag: 'wx' });
  return { ...revision, file: names.sql };
}
