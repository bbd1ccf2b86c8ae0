import { z } from 'zod';

/** SPEC "Configuration": list settings accept a list of strings or a comma-separated string. */
const list = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s.length > 0))
  .default([]);

const bool = z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  const s = v.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(s)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(s)) return false;
  return v;
}, z.boolean());

const int = (min?: number, max?: number) => {
  let n = z.coerce.number().int();
  if (min !== undefined) n = n.min(min);
  if (max !== undefined) n = n.max(max);
  return n;
};

const str = z.coerce.string();

/**
 * Every setting of SPEC "Configuration" with its type, default and constraint.
 * This file is the only home of a default.
 */
/** The settings SPEC "Configuration" defines. */
const KnownSettingsSchema = z.object({
  access_token_expire_minutes: int(1).default(30),
  account_pages_enabled: bool.default(true),
  account_mail_cooldown_seconds: int(0, 3600).default(60),
  activity_log_enabled: bool.default(false),
  activity_log_exclude_paths: str.default('refresh-token'),
  activity_log_retention_days: int(0).default(0),
  activity_log_sync: bool.default(false),
  activity_log_table: str.default(''),
  algorithm: z.enum(['HS256', 'HS384', 'HS512']).default('HS256'),
  api_v1_prefix: str.default(''),
  app_name: str.default('svc'),
  auth_database_url: str.default(''),
  auth_rate_limit: int(0, 10000).default(0),
  auth_rate_window_seconds: int(1).default(60),
  auto_create_auth_schema: bool.default(false),
  cache_max_entries: int(1).default(10000),
  cache_prefix: str.default('svc:'),
  cache_url: str.default('').refine((v) => v === '' || /^(redis|rediss|unix):\/\//.test(v), {
    message: 'must be empty or start with redis://, rediss:// or unix://',
  }),
  database_url: str.default(''),
  db_max_overflow: int(0, 500).default(10),
  db_pool_recycle: int(-1).default(1800),
  db_pool_size: int(1, 500).default(5),
  db_pool_timeout: int(1).default(30),
  db_statement_timeout_seconds: int(1, 86400).default(10),
  dbdebug: bool.default(false),
  debug: bool.default(false),
  default_locale: str.default('en').refine((v) => /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/.test(v), {
    message: 'must be a language tag such as en or de-CH',
  }),
  description: str.default(''),
  disable_core_routers: list,
  disable_core_routes: list,
  disable_routers: list,
  disable_routes: list,
  docs_enabled: bool.default(true),
  envelope_enabled: bool.default(true),
  email_verify_expire_hours: int(1, 720).default(48),
  email_verify_url: str
    .default('{public_url}/account/verify-email?token={token}')
    .refine((v) => v.includes('{token}'), { message: 'a link template containing {token}' }),
  events_allow_query_token: bool.default(false),
  events_broadcast_enabled: bool.default(false),
  events_public_types: list,
  events_ticket_store: z.enum(['database', 'cache']).default('database'),
  expose_response_database: bool.default(false),
  global_noauth: bool.default(false),
  group_permission_table: str.default(''),
  group_table: str.default(''),
  mail_from: str.default('no-reply@localhost'),
  mfa_config_table: str.default(''),
  mfa_pending_table: str.default(''),
  permission_table: str.default(''),
  user_group_table: str.default(''),
  user_permission_table: str.default(''),
  user_settings_table: str.default(''),
  user_table: str.default(''),
  host: str.default('127.0.0.1'),
  invitation_expire_hours: int(1, 720).default(72),
  invitation_url: str
    .default('{public_url}/account/accept-invitation?token={token}')
    .refine((v) => v.includes('{token}'), { message: 'a link template containing {token}' }),
  log_format: z.enum(['text', 'json']).default('text'),
  log_level: z
    .preprocess(
      (v) => (typeof v === 'string' ? v.trim().toUpperCase() : v),
      z.enum(['', 'CRITICAL', 'ERROR', 'WARNING', 'INFO', 'DEBUG']),
    )
    .default(''),
  login_lockout_minutes: int(0).default(15),
  login_max_attempts: int(1).default(5),
  mfa_enabled: bool.default(false),
  mfa_encryption_key: str.default(''),
  mfa_max_attempts: int(1).default(5),
  mfa_otp_expire_minutes: int(1).default(10),
  mfa_send_cooldown_seconds: int(0, 3600).default(30),
  mfa_totp_issuer: str.default(''),
  passkeys_enabled: bool.default(false),
  // SPEC-3 §7 rule 1: per-user maximum of passkeys.
  passkeys_max_per_user: int(1, 100).default(20),
  password_reset_expire_minutes: int(5, 1440).default(30),
  password_reset_url: str
    .default('{public_url}/account/reset-password?token={token}')
    .refine((v) => v.includes('{token}'), {
      message: 'a link template containing {token}',
    }),
  password_min_length: int(1).default(12),
  personal_tokens_enabled: bool.default(false),
  // SPEC-3 §7 rule 1: per-user maximum of live (unexpired) personal tokens.
  personal_tokens_max_per_user: int(1, 1000).default(50),
  port: int(1, 65535).default(8000),
  project_name: str.default(''),
  public_url: str.default('').refine((v) => v === '' || /^https?:\/\/[^\s/]+/i.test(v), {
    message: 'an http:// or https:// URL',
  }),
  // SPEC-3 §7 rule 1: how recent the login of a session must be to add a lasting credential.
  reauthentication_max_age_minutes: int(1, 60).default(5),
  refresh_reuse_grace_seconds: int(0).default(10),
  refresh_token_expire_days: int(1).default(7),
  refresh_token_rotation: bool.default(true),
  registration_enabled: bool.default(false),
  request_id_enabled: bool.default(true),
  require_verified_email: bool.default(false),
  secret_key: str.default(''),
  self_delete_enabled: bool.default(false),
  smtp_url: str.default('').refine((v) => v === '' || /^smtps?:\/\/\S+$/i.test(v), {
    message: 'an smtp:// or smtps:// URL',
  }),
  sqlite_synchronous: z
    .preprocess(
      (v) => (typeof v === 'string' ? v.trim().toUpperCase() : v),
      z.enum(['OFF', 'NORMAL', 'FULL', 'EXTRA']),
    )
    .default('NORMAL'),
  swagger_noauth: bool.default(false),
  table_prefix: str.default('svc_'),
  use_accept_language: bool.default(false),
  version: str.default(''),
  // SPEC-2 "Passkeys": empty derives them from public_url and app_name (passkeys/relying-party.ts).
  webauthn_origins: list,
  webauthn_rp_id: str.default(''),
  webauthn_rp_name: str.default(''),
  wrap_auth_token_response: bool.default(false),
  // SPEC-3 §4 (impersonation) and §5 (browser sessions in cookies).
  impersonation_enabled: bool.default(false),
  impersonation_expire_minutes: int(1, 120).default(15),
  cookie_sessions_enabled: bool.default(false),
  cookie_secure: z
    .preprocess(
      (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
      z.enum(['auto', 'true', 'false']),
    )
    .default('auto'),
  // A cookie's Domain attribute: a host name (a leading dot is allowed), nothing a cookie cannot carry.
  cookie_domain: str
    .default('')
    .refine(
      (v) =>
        v === '' ||
        /^\.?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(v),
      {
        message: 'a domain name, e.g. example.com',
      },
    ),
  csrf_trusted_origins: list.refine((origins) => origins.every((o) => /^https?:\/\/[^\s/?#@]+$/i.test(o)), {
    message: 'origins (scheme://host[:port], no path), comma-separated',
  }),
  // SPEC-3 §2 organizations
  organizations_enabled: bool.default(false),
  organization_create: z.enum(['any', 'superuser']).default('any'),
  organization_invitation_expire_hours: int(1, 720).default(72),
  organization_invitation_url: str
    .default('{public_url}/account/join-organization?token={token}')
    .refine((v) => v.includes('{token}'), {
      message: 'a link template containing {token}',
    }),
  // SPEC-3 section 1: social login. The per-provider settings (`oauth_<name>_client_id`, `_client_secret`,
  // `_issuer`, `_scopes`, `_label`) have names made of the provider's: social-login/providers.ts reads them.
  oauth_providers: list,
  oauth_link_policy: z.enum(['verified_email', 'explicit']).default('verified_email'),
  oauth_registration_enabled: bool.default(false),
  oauth_allowed_redirect_origins: list,
  // SPEC-3 §3 Webhooks
  webhooks_enabled: bool.default(false),
  webhook_retry_schedule: str
    .default('5,300,1800,7200,18000,36000,36000')
    .refine((v) => v.trim() === '' || v.split(',').every((s) => /^\s*\d+\s*$/.test(s)), {
      message: 'comma-separated whole seconds (empty: no retry)',
    }),
  webhook_timeout_seconds: int(1, 60).default(10),
  webhooks_allow_private_targets: bool.default(false),
  // SPEC-3 §6 (admin console).
  admin_console_enabled: bool.default(true),
});

/** The settings; unknown keys are kept (SPEC "Configuration" allows them; start-up warns about near misses). */
export const SettingsSchema = KnownSettingsSchema.loose();

export type Settings = z.output<typeof SettingsSchema>;
/** The known settings as code gives them (`createApp({ settings })`): a misspelt name is a type error. */
export type SettingsInput = z.input<typeof KnownSettingsSchema>;

/** Settings that are secrets: refused when found in the YAML file (SPEC "Configuration"). */
export const SECRET_SETTINGS = [
  'secret_key',
  'mfa_encryption_key',
  'database_url',
  'auth_database_url',
  'smtp_url',
] as const;

/** SPEC "Startup rules" 1. */
export const MIN_SECRET_KEY_LENGTH = 32;

/** The effective log level: empty means DEBUG with `debug`, INFO otherwise. */
export function effectiveLogLevel(settings: Pick<Settings, 'log_level' | 'debug'>): string {
  return settings.log_level || (settings.debug ? 'DEBUG' : 'INFO');
}

/**
 * Table name of a table of svc or of a module: the `<base>_table` setting, else table_prefix + the base name.
 * @example
 * defineTable(dialect, tableName(settings, 'invoice'), (c) => ({ id: c.uuid('id').primaryKey() }));
 * // `svc_invoice` with the default prefix, or whatever `invoice_table` says
 */
export function tableName(settings: Settings, base: string): string {
  const explicit = (settings as Record<string, unknown>)[`${base}_table`];
  return typeof explicit === 'string' && explicit !== '' ? explicit : `${settings.table_prefix}${base}`;
}
