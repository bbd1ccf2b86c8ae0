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
  DIALECTS,
  targetDir,
  dialectDir,
  chainDir,
  flatDialects,
  readRevisions,
  readChain,
  orderChain,
  resolveRevision,
  assertDialect,
  dialectName,
} from './chain.js';
export {
  createRevision,
  createRevisions,
  schemaDialect,
  schemaFits,
  checkSchema,
  diffBothWays,
  renameAmbiguities,
  type RevisionOptions,
  type RevisionResult,
  type RevisionsOptions,
  type DialectRevisionResult,
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
