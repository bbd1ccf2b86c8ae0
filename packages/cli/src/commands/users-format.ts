import { z } from '@svc/core/internal';
import { CliError } from '../errors.js';

// What `svc users` and its subcommands (users-accounts.ts, users-sessions.ts), `svc groups`, `svc permissions`
// and `svc init` share, in a file of its own so that none of them imports another command's file.

/** `undefined` = not given; `null` = clear (an empty value, SPEC "User"). Shared with `svc init`. */
export function normaliseEmail(raw: string | undefined): string | null | undefined {
  if (raw === undefined) return undefined;
  const email = String(raw).trim();
  if (email === '') return null;
  if (!z.email().max(320).safeParse(email).success)
    throw new CliError(`'${email}' is not a valid email address`);
  return email;
}

/** A plain text table with a header row and columns padded to their widest cell. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}
