/**
 * What each setting means (SPEC "Configuration"), for the generated reference `docs/configuration.md`.
 * `config-docs.test.ts` fails when a setting has no entry here or the document is stale.
 */
export const SETTING_DESCRIPTIONS: Record<string, { meaning: string; constraint?: string }> = {
  access_token_expire_minutes: { meaning: 'Lifetime of an access token, minutes', constraint: 'min 1' },
  account_mail_cooldown_seconds: {
    meaning: 'Least time between two link mails of one purpose to one account, seconds',
    constraint: '0 to 3600',
  },
  account_pages_enabled: {
    meaning:
      'Serve the built-in account pages /account/reset-password, /account/verify-email and /account/accept-invitation',
  },
  activity_log_enabled: { meaning: 'Record POST/PUT/PATCH/DELETE requests and expose the audit routes' },
  activity_log_exclude_paths: {
    meaning: 'Default `excludePaths` of the audit routes; paths containing a fragment are never logged',
    constraint: 'comma-separated fragments',
  },
  activity_log_retention_days: {
    meaning: 'Days kept by `svc audit purge`; 0 requires `--days`',
    constraint: 'min 0',
  },
  activity_log_sync: {
    meaning:
      'Write each activity entry before its response is sent, instead of in batches after it: a killed process loses no answered entry (docs/activity-log.md), at the cost of a database write on the path of every logged request',
  },
  activity_log_table: { meaning: 'Table name; empty means table_prefix + activity_log' },
  algorithm: { meaning: 'JWT signing algorithm', constraint: 'HS256, HS384, HS512' },
  api_v1_prefix: { meaning: 'Prefix added to every API route' },
  app_name: { meaning: 'Application name shown in the API documentation; also fallback of the TOTP issuer' },
  auth_database_url: {
    meaning:
      'URL of the authentication database (users, groups, permissions, tokens, tickets, MFA, activity log): `file:./auth.db` or `postgres://...`. Secret: environment or .env only',
  },
  auth_rate_limit: {
    meaning: 'Requests per client address and window on login, registration and MFA check; 0 is no limit',
    constraint: '0 to 10000',
  },
  auth_rate_window_seconds: { meaning: 'Window of auth_rate_limit, seconds', constraint: 'min 1' },
  auto_create_auth_schema: { meaning: 'Create the auth tables at startup instead of using migrations' },
  cache_max_entries: {
    meaning:
      'Maximum ordinary entries of the in-process cache (least recently used evicted), and of pending anonymous challenges (beyond: 503); security state is never evicted',
    constraint: 'min 1',
  },
  cache_prefix: { meaning: 'Prefix of cache keys' },
  cache_url: {
    meaning:
      'Empty: in-process cache; otherwise a shared Redis server (needed with several workers or hosts)',
    constraint: 'empty, or starts with redis://, rediss:// or unix://',
  },
  database_url: {
    meaning: 'URL of the main database; empty uses the auth database. Secret: environment or .env only',
  },
  db_max_overflow: {
    meaning: 'Extra connections above db_pool_size under load, per process',
    constraint: '0 to 500',
  },
  db_pool_recycle: {
    meaning: 'Seconds after which a connection is replaced; -1 never',
    constraint: 'min -1',
  },
  db_pool_size: {
    meaning: 'Connections a server database keeps open, per process (a file database has no pool)',
    constraint: '1 to 500',
  },
  db_pool_timeout: { meaning: 'Seconds to wait for a connection before failing', constraint: 'min 1' },
  db_statement_timeout_seconds: {
    meaning:
      'Bound of every statement the server runs, seconds: past it the request answers 503 `db.unavailable` and the readiness probe 503. PostgreSQL: `statement_timeout` of each connection, and the client stops waiting 1 s later (a network that swallows packets). File database: caps the wait for the write lock (`busy_timeout`, at most 5 s). Not applied to migrations and `svc audit purge`',
    constraint: '1 to 86400',
  },
  dbdebug: { meaning: 'Log SQL statements (may log sensitive parameters)' },
  debug: {
    meaning:
      'Unhandled errors return the traceback to clients; default log level becomes DEBUG. Development only',
  },
  default_locale: { meaning: 'Language of API error messages (en and de ship)', constraint: 'language tag' },
  description: { meaning: 'Project description shown in the health route and the API documentation' },
  disable_core_routers: {
    meaning:
      'Core routers not to mount: auth, settings, users, permissions, mfa, events, audit, health, version',
  },
  disable_core_routes: {
    meaning: 'Core routes not to expose at all (no 403; the route does not exist)',
    constraint: 'entries `[METHOD ]/path` relative to /api',
  },
  disable_routers: { meaning: 'Project routers not to mount (by router name)' },
  disable_routes: {
    meaning: 'Project routes not to expose',
    constraint: 'entries `[METHOD ]/path` relative to /api',
  },
  docs_enabled: {
    meaning:
      'Serve the interactive API documentation (`/docs`, `/docs/core`) and the OpenAPI documents; false answers 404',
  },
  envelope_enabled: { meaning: 'Wrap 2xx JSON in `{success, message, data}`' },
  email_verify_expire_hours: {
    meaning: 'Validity of an email-verification link, hours',
    constraint: '1 to 720',
  },
  email_verify_url: {
    meaning: 'Link template of a verification mail; {public_url} and {token} are filled in',
    constraint: 'contains {token}',
  },
  events_allow_query_token: { meaning: 'Accept the access token in the WebSocket URL (`?token=`)' },
  events_broadcast_enabled: { meaning: 'Mount the event routes (ticket and WebSocket)' },
  events_public_types: { meaning: 'Event types sent to every connected client' },
  events_ticket_store: { meaning: 'Where WebSocket tickets live', constraint: 'database, cache' },
  expose_response_database: {
    meaning: 'Adds the name of the database the data came from to enveloped responses',
  },
  global_noauth: { meaning: 'Disable authentication on every router. Development only' },
  group_permission_table: { meaning: 'Table name; empty means table_prefix + group_permission' },
  group_table: { meaning: 'Table name; empty means table_prefix + group' },
  mail_from: { meaning: 'Sender address of the built-in mailer (SPEC-2 "Mail and links")' },
  mfa_config_table: { meaning: 'Table name; empty means table_prefix + mfa_config' },
  mfa_pending_table: { meaning: 'Table name; empty means table_prefix + mfa_pending' },
  permission_table: { meaning: 'Table name; empty means table_prefix + permission' },
  user_group_table: { meaning: 'Table name; empty means table_prefix + user_group' },
  user_permission_table: { meaning: 'Table name; empty means table_prefix + user_permission' },
  user_settings_table: { meaning: 'Table name; empty means table_prefix + user_settings' },
  user_table: { meaning: 'Table name; empty means table_prefix + user' },
  host: { meaning: 'Bind address of the server commands' },
  invitation_expire_hours: { meaning: 'Validity of an invitation link, hours', constraint: '1 to 720' },
  invitation_url: {
    meaning: 'Link template of an invitation mail; {public_url} and {token} are filled in',
    constraint: 'contains {token}',
  },
  log_format: { meaning: 'Log line format', constraint: 'text, json' },
  log_level: {
    meaning: 'Empty means DEBUG when debug is true, INFO otherwise; any other value is rejected at startup',
    constraint: 'empty, CRITICAL, ERROR, WARNING, INFO, DEBUG (any case)',
  },
  login_lockout_minutes: { meaning: 'Duration of an account lock, minutes' },
  login_max_attempts: { meaning: 'Failed logins before the account is locked', constraint: 'min 1' },
  mfa_enabled: { meaning: 'Require the second step at login for users who enabled MFA' },
  mfa_encryption_key: {
    meaning:
      'Key of the stored TOTP secrets; empty: derived from secret_key. Secret: environment or .env only',
  },
  mfa_max_attempts: {
    meaning: 'Wrong MFA codes per login challenge before it is discarded',
    constraint: 'min 1',
  },
  mfa_otp_expire_minutes: {
    meaning: 'Validity of the MFA pending-login token and of email/SMS codes, minutes',
    constraint: 'min 1',
  },
  mfa_send_cooldown_seconds: {
    meaning: 'Seconds between two codes sent by email or SMS enrolment; 0 is no wait',
    constraint: '0 to 3600',
  },
  mfa_totp_issuer: { meaning: 'Issuer shown in authenticator apps; empty falls back to app_name, then svc' },
  password_reset_expire_minutes: {
    meaning: 'Validity of a password-reset link, minutes',
    constraint: '5 to 1440',
  },
  passkeys_enabled: { meaning: 'Mount the passkey (WebAuthn) routes and accept passkeys as the MFA step' },
  passkeys_max_per_user: {
    meaning: 'Most passkeys one user may register (409 auth.passkey_limit beyond it)',
    constraint: '1 to 100',
  },
  password_reset_url: {
    meaning: 'Link template of a password-reset mail; {public_url} and {token} are filled in',
    constraint: 'contains {token}',
  },
  password_min_length: { meaning: 'Minimum password length', constraint: 'min 1' },
  personal_tokens_enabled: {
    meaning:
      'Mount the personal access token routes (/auth/tokens, /admin/user/{user_id}/tokens) and accept `svc_pat_` tokens as bearer credentials',
  },
  personal_tokens_max_per_user: {
    meaning:
      'Most unexpired personal access tokens one user may hold (409 access.token_limit beyond it); deleted and expired tokens do not count',
    constraint: '1 to 1000',
  },
  port: { meaning: 'Bind port of the server commands', constraint: '1 to 65535' },
  project_name: { meaning: 'Project name shown in the health route and the API documentation' },
  public_url: {
    meaning:
      'Base URL of the application as users reach it; links in mails are built from it, never from request headers. Empty: http://{host}:{port} of the server',
    constraint: 'http:// or https:// URL',
  },
  reauthentication_max_age_minutes: {
    meaning:
      'How recent the login of a session must be to register a passkey or create a personal access token (403 auth.reauthentication_required otherwise); a refresh is not a login',
    constraint: '1 to 60',
  },
  refresh_reuse_grace_seconds: {
    meaning: 'Grace in which a reused refresh token is refused but the login is kept',
    constraint: 'min 0',
  },
  refresh_token_expire_days: { meaning: 'Lifetime of a refresh token, days', constraint: 'min 1' },
  refresh_token_rotation: { meaning: 'Every refresh issues a new single-use refresh token' },
  registration_enabled: { meaning: 'Allow `POST /auth/register`' },
  request_id_enabled: { meaning: '`X-Request-ID` header on every response and id in every log line' },
  require_verified_email: {
    meaning:
      'Login refuses accounts without a verified email (403 auth.email_unverified after the password was verified); superusers excepted',
  },
  secret_key: {
    meaning: 'Signs the tokens. Required, random, at least 32 characters. Secret: environment or .env only',
    constraint: 'at least 32 characters',
  },
  self_delete_enabled: { meaning: 'Allow `DELETE /auth/user`: users delete their own account' },
  smtp_url: {
    meaning:
      'smtp://user:pass@host:port or smtps://...: the built-in mailer delivers over SMTP (also the MFA email codes when no mfaSender is given). Empty: mails are not delivered, a warning is logged (with debug, the link too). Secret: environment or .env only',
    constraint: 'smtp:// or smtps:// URL',
  },
  sqlite_synchronous: {
    meaning:
      'SQLite `synchronous` pragma of the file database (WAL mode): NORMAL is durable across crashes of the process, FULL also across power loss',
    constraint: 'OFF, NORMAL, FULL, EXTRA',
  },
  swagger_noauth: {
    meaning:
      'Interactive docs act as the first superuser without a token. Development only; answers only loopback requests without proxy headers',
  },
  table_prefix: { meaning: 'Prefix of every core table name' },
  use_accept_language: {
    meaning: 'Pick the message language from the `Accept-Language` header of each request',
  },
  version: { meaning: 'Project version shown in the health route and the API documentation' },
  webauthn_origins: {
    meaning:
      'Origins accepted in the client data of passkey ceremonies (comma-separated); empty means the origin of public_url',
  },
  webauthn_rp_id: {
    meaning: 'WebAuthn relying-party id (a domain); empty means the host of public_url',
  },
  webauthn_rp_name: { meaning: 'Relying-party name shown by authenticators; empty means app_name' },
  wrap_auth_token_response: { meaning: 'Wrap the login, refresh and MFA-verify responses in the envelope' },
  // SPEC-3 §4 (impersonation) and §5 (browser sessions in cookies).
  impersonation_enabled: {
    meaning: 'Mount `POST /admin/user/{user_id}/impersonate` (superusers act as a user)',
  },
  impersonation_expire_minutes: {
    meaning: 'Lifetime of an impersonation token (there is no refresh token)',
    constraint: '1 to 120',
  },
  cookie_sessions_enabled: {
    meaning:
      'Mount the cookie session routes (`/auth/session`) and accept the session cookie (docs/browser-sessions.md)',
  },
  cookie_secure: {
    meaning:
      '`auto`: cookies are Secure unless public_url is http on a loopback host (localhost, 127.0.0.0/8, ::1); `true`, `false`',
    constraint: 'auto, true, false',
  },
  cookie_domain: { meaning: 'Domain attribute of the session cookies; empty: host-only cookies' },
  csrf_trusted_origins: {
    meaning:
      'Origins trusted on cookie requests besides the origin of public_url, which always is (comma-separated)',
    constraint: 'scheme://host[:port] each',
  },
  // SPEC-3 §2 organizations
  organizations_enabled: { meaning: 'Mount the organization routes (/organizations, /admin/organizations)' },
  organization_create: {
    meaning: 'Who may create an organization: `any` user or `superuser` only',
    constraint: 'any or superuser',
  },
  organization_invitation_expire_hours: {
    meaning: 'Validity of an organization invitation link, hours',
    constraint: '1 to 720',
  },
  organization_invitation_url: {
    meaning: 'Link template of an organization invitation mail; {public_url} and {token} are filled in',
    constraint: 'contains {token}',
  },
  // SPEC-3 section 1: social login
  oauth_providers: {
    meaning:
      'Names of the enabled sign-in providers (comma-separated), e.g. google,github,acme; each needs SVC_OAUTH_<NAME>_CLIENT_ID and _CLIENT_SECRET, and _ISSUER for a name without a preset (docs/social-login.md)',
  },
  oauth_link_policy: {
    meaning:
      'verified_email: a first social login links to the account with the same email only when the provider and the account both verified it; explicit: never, the user links from their account',
  },
  oauth_registration_enabled: {
    meaning: 'A first social login with no matching account creates one',
  },
  oauth_allowed_redirect_origins: {
    meaning:
      'Origins that redirect_to of a social login may name besides relative paths (comma-separated); the origin of public_url is always allowed',
  },
  // SPEC-3 §3 Webhooks
  webhooks_enabled: {
    meaning: 'Mount the webhook routes (/admin/webhooks) and run delivery in every process',
  },
  webhook_retry_schedule: {
    meaning:
      'Seconds to wait before each retry after a failed webhook attempt; the attempts stop after the last (1 + N attempts for N waits)',
    constraint: 'comma-separated whole seconds',
  },
  webhook_timeout_seconds: { meaning: 'Time limit of one webhook attempt, seconds', constraint: '1 to 60' },
  webhooks_allow_private_targets: {
    meaning:
      'Allow webhook URLs whose host is or resolves to a loopback, private, link-local or unique-local address, and http:// URLs (development and tests only)',
  },
  // SPEC-3 §6 (admin console).
  admin_console_enabled: {
    meaning:
      'Serve the admin console for superusers at `/admin/` (outside `/api`); false: `/admin/` answers 404 (docs/admin-console.md)',
  },
};
