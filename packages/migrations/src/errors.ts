/**
 * A migration problem the user can fix (broken chain, wrong dialect, unknown revision). The CLI prints the
 * message as one line and exits non-zero.
 */
export class MigrationError extends Error {
  override name = 'MigrationError';
}
