export { MigrationError } from './errors.js';
export {
  STATEMENT_BREAKPOINT,
  formatRevision,
  parseRevision,
  newRevisionId,
  slugOf,
  type Revision,
} from './revision-file.js';
export {
  MIGRATIONS_DIR,
  DEFAULT_TARGET,
  targetDir,
  readRevisions,
  readChain,
  orderChain,
  resolveRevision,
  assertDialect,
} from './chain.js';
export {
  createRevision,
  checkSchema,
  diffBothWays,
  renameAmbiguities,
  type RevisionOptions,
  type RevisionResult,
  type CheckResult,
} from './autogenerate.js';
export {
  upgrade,
  downgrade,
  stamp,
  currentRevision,
  pendingRevisions,
  versionTableName,
  SQLITE_LOCK_TIMEOUT_MS,
  type RunOptions,
  type RunResult,
} from './apply.js';
export { warnIfBehind } from './warn.js';
