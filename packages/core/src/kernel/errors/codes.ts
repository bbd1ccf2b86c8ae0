/** One error code of the registry: its HTTP status and default `loc`/`type`. */
export interface ErrorSpec {
  status: number;
  loc?: readonly string[];
  type?: string;
}

const AUTH_HEADER = ['header', 'Authorization'] as const;

/**
 * Every stable error code (SPEC "Errors"). Codes are public API: add, never rename or reuse.
 * `errors.test.ts` keeps this, the locale catalogs and `docs/errors.md` in step.
 */
export const ERROR_CODES = {
  // 400
  'auth.username_taken': { status: 400, loc: ['body', 'username'] },
  'user.username_or_email_exists': { status: 400, loc: ['body', 'username'] },
  'auth.password_incorrect': { status: 400, loc: ['body', 'currentPassword'] },
  'auth.reset_token_invalid': { status: 400, loc: ['body', 'token'] },
  'auth.verify_token_invalid': { status: 400, loc: ['body', 'token'] },
  'auth.invitation_invalid': { status: 400, loc: ['body', 'token'] },
  'auth.mfa_code_required': { status: 400, loc: ['body', 'code'] },
  'auth.mfa_code_incorrect': { status: 400, loc: ['body', 'code'] },
  'user.no_email': { status: 400, loc: ['body'] },
  'user.email_exists': { status: 400, loc: ['body', 'email'] },
  'user.disabled': { status: 400, loc: AUTH_HEADER },
  'user.cannot_delete_self': { status: 400, loc: ['path', 'user_id'] },
  'user.cannot_demote_self': { status: 400, loc: ['body'] },
  'user.cannot_reset_own_mfa': { status: 400, loc: ['path', 'user_id'] },
  'user.last_superuser': { status: 400, loc: ['body'] },
  'db.invalid_value': { status: 400, loc: ['body'] },
  'mfa.totp_invalid': { status: 400, loc: ['body', 'code'] },
  'mfa.no_email': { status: 400, loc: ['body'] },
  'mfa.email_code_invalid': { status: 400, loc: ['body', 'code'] },
  'mfa.no_email_setup': { status: 400, loc: ['body'] },
  'mfa.sms_code_invalid': { status: 400, loc: ['body', 'code'] },
  'mfa.no_sms_setup': { status: 400, loc: ['body'] },
  'mfa.no_passkey': { status: 400, loc: ['body', 'mfa_token'] },
  'request.invalid_json': { status: 400, loc: ['body'], type: 'json_invalid' },
  'request.json_too_deep': { status: 400, loc: ['body'], type: 'json_invalid' }, // params.max_depth
  'request.invalid_encoding': { status: 400, loc: ['header', 'Content-Encoding'] },
  // 401
  'auth.invalid_credentials': { status: 401, loc: ['body', 'username'] },
  'auth.not_authenticated': { status: 401, loc: AUTH_HEADER },
  'auth.token_invalid': { status: 401, loc: AUTH_HEADER },
  'auth.token_wrong_type': { status: 401, loc: AUTH_HEADER },
  'auth.token_no_subject': { status: 401, loc: AUTH_HEADER },
  'auth.token_revoked': { status: 401, loc: AUTH_HEADER },
  'auth.session_revoked': { status: 401, loc: AUTH_HEADER }, // SPEC-2 "Sessions"
  'user.not_found': { status: 401, loc: AUTH_HEADER }, // admin lookups pass status 404 (SPEC "Errors")
  'auth.refresh_token_invalid': { status: 401, loc: ['body', 'refresh_token'] },
  'auth.refresh_user_invalid': { status: 401, loc: ['body', 'refresh_token'] },
  'auth.refresh_token_revoked': { status: 401, loc: ['body', 'refresh_token'] },
  'mfa.token_invalid': { status: 401, loc: ['body', 'mfa_token'] },
  'mfa.challenge_not_found': { status: 401, loc: ['body', 'mfa_token'] },
  'mfa.code_invalid': { status: 401, loc: ['body', 'code'] },
  'mfa.not_configured': { status: 401, loc: ['body', 'mfa_token'] },
  'auth.passkey_invalid': { status: 401, loc: ['body', 'response'] }, // registration passes status 400
  // 403
  'auth.registration_disabled': { status: 403, loc: ['body'] },
  'auth.self_delete_disabled': { status: 403, loc: ['body'] },
  'access.superuser_required': { status: 403, loc: AUTH_HEADER },
  'access.staff_required': { status: 403, loc: AUTH_HEADER },
  'access.permissions_missing': { status: 403, loc: AUTH_HEADER }, // params.permissions
  'access.loopback_only': { status: 403, loc: ['header', 'Host'] },
  'access.token_not_allowed': { status: 403, loc: AUTH_HEADER },
  'mfa.disabled': { status: 403, loc: ['body'] },
  'auth.email_unverified': { status: 403, loc: ['body', 'username'] },
  'auth.reauthentication_required': { status: 403, loc: AUTH_HEADER }, // SPEC-3 §7 rule 1
  // 404
  'request.not_found': { status: 404, loc: ['path'] },
  'access.token_not_found': { status: 404, loc: ['path', 'token_id'] },
  'auth.session_not_found': { status: 404, loc: ['path', 'session_id'] },
  'auth.passkey_not_found': { status: 404, loc: ['path', 'id'] },
  // 405
  'request.method_not_allowed': { status: 405, loc: ['path'] },
  // 409
  'mfa.already_enabled': { status: 409, loc: ['body'] },
  'db.conflict': { status: 409, loc: ['body'] },
  'user.email_already_verified': { status: 409, loc: ['body'] },
  'access.token_limit': { status: 409, loc: ['body'] }, // SPEC-3 §7 rule 1: params.max
  'auth.passkey_limit': { status: 409, loc: ['body'] }, // SPEC-3 §7 rule 1: params.max
  // 413, 415
  'request.body_too_large': { status: 413, loc: ['body'] },
  'request.unsupported_media_type': { status: 415, loc: ['header', 'Content-Type'] },
  // 422
  'auth.password_too_short': { status: 422, loc: ['body', 'password'] }, // params.min_length
  'auth.password_mismatch': { status: 422, loc: ['body', 'confirm'] }, // the account pages' second entry
  'auth.password_unchanged': { status: 422, loc: ['body', 'newPassword'] },
  'user.settings_category_invalid': { status: 422, loc: ['path', 'category'] },
  'user.settings_key_invalid': { status: 422, loc: ['path', 'key'] },
  'user.settings_value_invalid': { status: 422, loc: ['body', 'value'] },
  'user.username_invalid': { status: 422, loc: ['body', 'username'] }, // params.reason, min_length, max_length
  'request.validation_error': { status: 422, loc: ['body'] },
  'access.permission_not_held': { status: 422, loc: ['body', 'permissions'] }, // params.permissions
  'access.token_expiry_required': { status: 422, loc: ['body', 'expiresInDays'] }, // SPEC-3 §7 rule 1
  // 429
  'auth.too_many_attempts': { status: 429, loc: ['body'] },
  'mfa.too_many_attempts': { status: 429, loc: ['body'] },
  'auth.rate_limited': { status: 429, loc: ['client'] },
  'account.mail_cooldown': { status: 429, loc: ['body'] },
  // 500
  'server.error': { status: 500, loc: [], type: 'server_error' },
  // 503
  'health.not_ready': { status: 503, loc: [] },
  'db.unavailable': { status: 503, loc: [], type: 'server_error' },
  'cache.unavailable': { status: 503, loc: [], type: 'server_error' },
  // SPEC-3 §4 (impersonation) and §5 (browser sessions in cookies)
  'auth.csrf_failed': { status: 403, loc: ['header', 'X-CSRF-Token'] },
  'access.impersonation_forbidden': { status: 403, loc: AUTH_HEADER },
  'user.cannot_impersonate': { status: 403, loc: ['path', 'user_id'] },
  // SPEC-3 §2 organizations
  'organization.required': { status: 400, loc: ['header', 'X-Organization-Id'] },
  'organization.last_owner': { status: 400, loc: ['body'] },
  'organization.invitation_invalid': { status: 400, loc: ['body', 'token'] },
  'organization.create_forbidden': { status: 403, loc: ['body'] },
  'organization.role_forbidden': { status: 403, loc: ['body'] },
  'organization.invitation_email_mismatch': { status: 403, loc: ['body', 'token'] },
  'organization.not_found': { status: 404, loc: ['path', 'org_id'] },
  'organization.member_not_found': { status: 404, loc: ['path', 'user_id'] },
  'organization.invitation_not_found': { status: 404, loc: ['path', 'invitation_id'] },
  'organization.slug_taken': { status: 409, loc: ['body', 'slug'] },
  'organization.already_member': { status: 409, loc: ['body', 'email'] },
  'organization.role_invalid': { status: 422, loc: ['body', 'role'] }, // params.roles
  // SPEC-3 section 1: social login and identity linking (statuses where a route answers them; the others travel
  // in the callback's `#svc_error` fragment).
  'auth.oauth_provider_unknown': { status: 404, loc: ['path', 'provider'] },
  'auth.oauth_provider_error': { status: 502, loc: [] },
  'auth.oauth_redirect_invalid': { status: 400, loc: ['query', 'redirect_to'] },
  'auth.oauth_state_invalid': { status: 400, loc: ['query', 'state'] },
  'auth.oauth_denied': { status: 400, loc: ['query', 'error'] },
  'auth.oauth_token_invalid': { status: 400, loc: ['query', 'code'] },
  'auth.oauth_account_exists': { status: 409, loc: [] },
  'auth.oauth_registration_disabled': { status: 403, loc: [] },
  'auth.oauth_identity_in_use': { status: 409, loc: [] },
  'auth.oauth_login_failed': { status: 401, loc: ['body', 'code'] },
  'auth.oauth_code_invalid': { status: 400, loc: ['body', 'code'] },
  'auth.identity_not_found': { status: 404, loc: ['path', 'identity_id'] },
  'auth.last_login_method': { status: 400, loc: ['path', 'identity_id'] },
  // SPEC-3 §3 Webhooks
  'webhook.url_invalid': { status: 422, loc: ['body', 'url'] },
  'webhook.url_forbidden': { status: 422, loc: ['body', 'url'] },
  'webhook.event_unknown': { status: 422, loc: ['body', 'events'] }, // params.event
  'webhook.not_found': { status: 404, loc: ['path', 'webhook_id'] },
  'webhook.delivery_not_found': { status: 404, loc: ['path', 'delivery_id'] },
} as const satisfies Record<string, ErrorSpec>;

export type CoreErrorCode = keyof typeof ERROR_CODES;

export function isCoreErrorCode(code: string): code is CoreErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}
