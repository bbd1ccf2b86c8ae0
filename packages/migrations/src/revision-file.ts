import { randomBytes } from 'node:crypto';
import type { Dialect } from '@svc/core/internal';
import { MigrationError } from './errors.js';

/** One step of a target's chain: what it changes, how to undo it, and the schema it leads to. */
export interface Revision {
  id: string;
  /** The revision this one follows; `null` for the first revision of the chain. */
  parent: string | null;
  message: string;
  dialect: Dialect;
  /** ISO 8601 time the revision was written. */
  created: string;
  /** Forward SQL, one entry per statement chunk (a chunk may hold several statements). */
  upgrade: string[];
  /** Backward SQL. */
  downgrade: string[];
  /** drizzle-kit snapshot of the schema after `upgrade`; the next autogenerate diffs from it. */
  snapshot: unknown;
  /** File name of the `.sql` file inside the target folder. */
  file: string;
}

/** Separates statements inside a section (the marker drizzle-kit's own migrations use). */
export const STATEMENT_BREAKPOINT = '--> statement-breakpoint';
const UPGRADE_MARKER = '-- +svc upgrade';
const DOWNGRADE_MARKER = '-- +svc downgrade';
const FIRST_LINE = '-- svc migration revision';
const BASE = 'base';

/** Revision id: sortable time plus 4 random hex characters, e.g. `20250611101500_3fa2`. */
export function newRevisionId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${stamp}_${randomBytes(2).toString('hex')}`;
}

/** `Add index on activity` → `add_index_on_activity` (file names stay portable). */
export function slugOf(message: string): string {
  const slug = message
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 48)
    .replace(/_+$/, '');
  return slug || 'revision';
}

/** File names of a revision: `<id>_<slug>.sql` and its snapshot beside it. */
export function revisionFileNames(id: string, message: string): { sql: string; snapshot: string } {
  const stem = `${id}_${slugOf(message)}`;
  return { sql: `${stem}.sql`, snapshot: `${stem}.snapshot.json` };
}

function section(statements: string[]): string {
  if (statements.length === 0) return '-- (nothing)\n';
  return statements.map((s) => s.trim()).join(`\n${STATEMENT_BREAKPOINT}\n`) + '\n';
}

/** The `.sql` text of a revision: a header of `-- key: value` lines, then the two SQL sections. */
export function formatRevision(revision: Omit<Revision, 'file' | 'snapshot'>, snapshotFile: string): string {
  const header = [
    `${FIRST_LINE} (edit the SQL freely; keep the header lines and the +svc markers)`,
    `-- id: ${revision.id}`,
    `-- parent: ${revision.parent ?? BASE}`,
    `-- message: ${revision.message.replace(/\s+/g, ' ').trim()}`,
    `-- dialect: ${revision.dialect}`,
    `-- created: ${revision.created}`,
    `-- snapshot: ${snapshotFile}`,
  ].join('\n');
  return `${header}\n\n${UPGRADE_MARKER}\n${section(revision.upgrade)}\n${DOWNGRADE_MARKER}\n${section(revision.downgrade)}`;
}

/** True when a chunk holds something besides comments and blanks. */
function hasSql(chunk: string): boolean {
  return chunk.split('\n').some((line) => {
    const t = line.trim();
    return t !== '' && !t.startsWith('--');
  });
}

function splitStatements(text: string): string[] {
  return text
    .split(/^--> statement-breakpoint[ \t]*$/m)
    .map((chunk) => chunk.trim())
    .filter(hasSql);
}

/** Parses the `.sql` text of a revision (the snapshot is read separately). */
export function parseRevision(
  text: string,
  file: string,
): Omit<Revision, 'snapshot'> & { snapshotFile: string } {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (!lines[0]?.startsWith(FIRST_LINE)) {
    throw new MigrationError(`${file}: not a svc revision (the first line must start with '${FIRST_LINE}')`);
  }
  const header: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const match = /^--\s*([a-z]+):\s?(.*)$/.exec(line);
    if (!match) break;
    header[match[1]!] = match[2]!.trim();
  }
  for (const key of ['id', 'parent', 'message', 'dialect', 'snapshot']) {
    if (header[key] === undefined)
      throw new MigrationError(`${file}: the header line '-- ${key}: …' is missing`);
  }
  if (header.dialect !== 'sqlite' && header.dialect !== 'pg') {
    throw new MigrationError(`${file}: dialect must be sqlite or pg, not '${header.dialect}'`);
  }
  const body = lines.join('\n');
  const up = body.indexOf(`\n${UPGRADE_MARKER}`);
  const down = body.indexOf(`\n${DOWNGRADE_MARKER}`);
  if (up < 0 || down < 0 || down < up) {
    throw new MigrationError(
      `${file}: needs a '${UPGRADE_MARKER}' line followed by a '${DOWNGRADE_MARKER}' line`,
    );
  }
  return {
    id: header.id!,
    parent: header.parent === BASE || header.parent === '' ? null : header.parent!,
    message: header.message!,
    dialect: header.dialect,
    created: header.created ?? '',
    upgrade: splitStatements(body.slice(up + UPGRADE_MARKER.length + 1, down)),
    downgrade: splitStatements(body.slice(down + DOWNGRADE_MARKER.length + 1)),
    file,
    snapshotFile: header.snapshot!,
  };
}
