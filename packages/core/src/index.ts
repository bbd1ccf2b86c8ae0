export { createApp, createAuthSchema } from './app/create-app.js';
export type {
  App,
  AppOptions,
  MigrationTarget,
  AppRuntime,
  InitOptions,
  ListenOptions,
  UdpListener,
} from './app/create-app.js';
export { SERVICE_NAME, SERVICE_VERSION } from './app/version.js';
export { STATIC_FILES_CSP, type StaticFiles } from './kernel/static-files.js';
export {
  defineRouter,
  type Router,
  type RouterOptions,
  type RouteOptions,
  type HandlerContext,
  type HandlerSettings,
  type HttpMethod,
  type PathParams,
  type UserSettingPaths,
} from './kernel/router.js';
export {
  defineSettingsSection,
  type SettingsSection,
  type SettingsSectionDefinition,
  type SettingsFieldDefinition,
  type SettingsFieldType,
  type SettingsAction,
} from './user-settings/define.js';
export { SvcError, type SvcErrorOptions } from './kernel/errors/svc-error.js';
export { assertRecentLogin, hasRecentLogin } from './kernel/recent-login.js';
export { ERROR_CODES, type CoreErrorCode } from './kernel/errors/codes.js';
export { SettingsSchema, tableName, type Settings, type SettingsInput } from './kernel/config/schema.js';
export { loadSettings, ConfigError, type LoadSettingsOptions } from './kernel/config/load.js';
export { addTranslations } from './kernel/i18n/index.js';
export { PaginationQuery, pageOf, pageSchema, type Page } from './kernel/pagination.js';
export type { Cache, CacheWriteOptions } from './kernel/cache/cache.js';
export type { Database } from './kernel/db/database.js';
export type { Logger } from './kernel/log/logger.js';
export type { AuthUser, Audience, CoreEvents, Ports } from './kernel/ports.js';
export type { MfaSender, EmailCodeMessage, SmsCodeMessage } from './mfa/sender.js';
export { escapeHtml } from './mail/index.js';
export type { Mailer, MailKind, MailTemplate, MailVariables, RenderedMail } from './mail/index.js';
export type { AccountMail, InvitationMail } from './kernel/ports.js';
export { defineModule, moduleOptions } from './kernel/module.js';
export type {
  SvcModule,
  ModuleContext,
  ModuleDefinition,
  ModuleInstance,
  ModuleOptions,
  ModulePorts,
  PortName,
  RequestRecord,
} from './kernel/module.js';
export type { CoreTables } from './kernel/db/tables.js';
export {
  defineTable,
  type ColumnKinds,
  type DefinedTable,
  type Dialect,
  type TableParts,
} from './kernel/db/define-table.js';
export { z } from 'zod';
// SPEC-3 §5 (docs/browser-sessions.md): the cookie answer of a project's own token-issuing route.
export { issueTokensWith, type IssueTokens } from './kernel/browser-session.js';
export type { BrowserSessions, IssuedLogin, TokenRouteContext } from './kernel/ports.js';
