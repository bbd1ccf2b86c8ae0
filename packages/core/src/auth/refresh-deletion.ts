import type { Dialect } from '../kernel/db/tables.js';

/**
 * Deletes refresh records with `pass` and, on PostgreSQL, repeats until a pass finds none: a DELETE that waited
 * for a concurrent rotation's row lock does not see the successor that rotation committed meanwhile (READ
 * COMMITTED takes the snapshot at the statement's start), the next pass does. On SQLite one pass suffices
 * (writes are serialised). Shared by the auth store (logout, password change) and the session store.
 */
export async function deleteUntilGone(dialect: Dialect, pass: () => PromiseLike<unknown[]>): Promise<void> {
  for (let i = 0; i < 5; i += 1) {
    const deleted = await pass();
    if (dialect !== 'pg' || deleted.length === 0) return;
  }
}
