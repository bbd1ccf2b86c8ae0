/**
 * Internals for `@svc/cli` and `@svc/migrations` only: no compatibility promise.
 */
/**
 * The core modules (`coreModules`) and `buildAuthSchema` (the whole auth schema), imported when a command asks
 * for them: they import every feature's routes, schemas and services, which `svc users` and the other commands
 * that serve no HTTP never run (docs/performance.md "The CLI's start").
 * @example const { coreModules, buildAuthSchema } = await loadCoreModules();
 */
export const loadCoreModules = () => import('./app/auth-schema.js');
export { createTablesSql, snapshotOf, diffSnapshots, drizzleKit } from './kernel/db/ddl.js';
export {
  assertDatabaseDriver,
  openDatabase,
  dialectOf,
  redactUrl,
  sqlitePath,
  type Orm,
} from './kernel/db/database.js';
export { coreTables, type CoreTables, type Dialect } from './kernel/db/tables.js';
export {
  loadSettings,
  readDotenv,
  checkSecretKey,
  ConfigError,
  findSettingTypos,
  settingTypoMessage,
  type SettingTypo,
} from './kernel/config/load.js';
export { codeFrame, type SourceLocation } from './kernel/config/code-frame.js';
export {
  SettingsSchema,
  SECRET_SETTINGS,
  MIN_SECRET_KEY_LENGTH,
  tableName,
  effectiveLogLevel,
} from './kernel/config/schema.js';
export { createLogger, type Logger } from './kernel/log/logger.js';
export { createCache } from './kernel/cache/index.js';
export { createPortRegistry, type Ports, type PortRegistry } from './kernel/ports.js';
export { ERROR_CODES } from './kernel/errors/codes.js';
export { catalogs, translator } from './kernel/i18n/index.js';
export { createUserManager, UserManagementError, type UserManager } from './users/manage.js';
export {
  checkUsername,
  describePasswordPolicy,
  describeUsernameProblem,
  meetsPasswordPolicy,
  normaliseEmail,
  normaliseUsername,
  usernameLookupKeys,
  USERNAME_MAX_LENGTH,
  USERNAME_MIN_LENGTH,
  type UsernameCheck,
} from './kernel/identity.js';
export { encryptPlainMfaSecrets } from './mfa/encrypt-secrets.js';
export { purgeActivityLog, type PurgeActivityOptions, type PurgeActivityResult } from './audit/purge.js';
export { hashPassword, verifyPassword } from './auth/passwords.js';
export {
  createRbacStore,
  type RbacStore,
  type PermissionRow,
  type GroupRow,
  type PermissionsRecord,
} from './rbac/store.js';
export {
  declaredPermissions,
  declaredPermissionProblem,
  permissionsRecorder,
  syncPermissions,
  type PermissionSync,
} from './rbac/service.js';
export { CODENAME_MAX_LENGTH, DESCRIPTION_MAX_LENGTH, GROUP_NAME_MAX_LENGTH } from './rbac/constants.js';
export { isMissingTableError } from './kernel/errors/format.js';
export { createAccountService, type AccountService } from './accounts/service.js';
export { createAccountStore } from './accounts/store.js';
export { accountTables, type AccountTables } from './accounts/tables.js';
export { createMailDelivery } from './mail/service.js';
export { createMfaService, type MfaService } from './mfa/service.js';
export { createMfaStore } from './mfa/store.js';
export { mfaTables, type MfaTables } from './mfa/tables.js';
export { createLoggingSender } from './mfa/sender.js';
export { MemoryCache } from './kernel/cache/memory-cache.js';
export { authTables, type AuthTables } from './auth/tables.js';
export { createSessionStore, type SessionRow, type SessionStore } from './auth/session-store.js';
export { endImpersonationsByCommand } from './auth/impersonation-end.js';
export { createStandaloneActivityLog } from './audit/standalone.js';
export { createStandaloneEventSink } from './events/standalone.js';
export { createPersonalTokenStore, type PersonalTokenStore } from './personal-tokens/store.js';
export { personalTokenTables, type PersonalTokenTables } from './personal-tokens/tables.js';
// Also in the public API; here so that `svc users` and the other commands that serve no HTTP import
// `@svc/core/internal` alone, without `createApp` and Express (docs/performance.md "The CLI's start").
export { SvcError } from './kernel/errors/svc-error.js';
export { z } from 'zod';
// SPEC-3 §2 organizations: `svc orgs`.
export { createOrganizationManager, type OrganizationManager } from './organizations/manage.js';
export { SLUG_PATTERN as ORGANIZATION_SLUG_PATTERN } from './organizations/constants.js';
// SPEC-3 section 1: social login (`svc users identities`)
export { createSocialLoginStore, type SocialLoginStore } from './social-login/store.js';
export { socialLoginTables, type SocialLoginTables } from './social-login/tables.js';
export { unlinkIdentity } from './social-login/unlink.js';
// SPEC-3 §3 Webhooks: `svc users` records events and `svc webhooks` manages endpoints without the app.
export { webhookTables, type WebhookTables } from './webhooks/tables.js';
export { createStandaloneWebhookOutbox } from './webhooks/outbox.js';
export { createWebhookStore, type WebhookStore } from './webhooks/store.js';
export { createWebhookService, type WebhookService } from './webhooks/service.js';
