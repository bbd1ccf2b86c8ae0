import type { IssueTokens } from '../kernel/browser-session.js';
import { defineRouter, type Router } from '../kernel/router.js';
import {
  BackupCodesOut,
  MfaCodeBody,
  MfaPasswordBody,
  MfaStatusOut,
  MfaVerifyBody,
  SmsSetupBody,
  TokenPairOut,
  TotpSetupOut,
  UserIdParams,
} from './schemas.js';
import type { MfaService } from './service.js';

/** The routes of SPEC "Multi-factor routes" (router name `mfa` for `disable_core_routers`). */
export function createMfaRouter(service: MfaService, issue: IssueTokens): Router {
  // SPEC-2 "Personal access tokens": every MFA route is a credential route.
  const mfa = defineRouter({ prefix: '/mfa', name: 'mfa', tags: ['mfa'], allowPersonalToken: false });

  mfa.post(
    '/verify',
    {
      public: true,
      summary: 'Complete a login with the second factor',
      body: MfaVerifyBody,
      response: TokenPairOut,
      envelope: 'auth-token', // SPEC "Response envelope": OAuth2 token shape
    },
    // SPEC-3 §5: with `X-Svc-Session: cookie`, the cookies and `{user}` instead of the pair.
    (ctx) =>
      issue(ctx, () =>
        service.verify(
          ctx.body.mfa_token,
          ctx.body.webauthn ? { webauthn: ctx.body.webauthn } : (ctx.body.code ?? ''),
          ctx.clientIp,
        ),
      ),
  );
  mfa.get('/status', { summary: 'MFA status of the current user', response: MfaStatusOut }, (ctx) =>
    service.status(ctx.user),
  );
  mfa.post('/totp/setup', { summary: 'Start TOTP enrolment', response: TotpSetupOut }, (ctx) =>
    service.setupTotp(ctx.user),
  );
  mfa.post(
    '/totp/confirm',
    { summary: 'Confirm TOTP enrolment', body: MfaCodeBody, response: MfaStatusOut },
    (ctx) => service.confirmTotp(ctx.user, ctx.body.code),
  );
  mfa.post('/email/setup', { summary: 'Start email-code enrolment', response: BackupCodesOut }, (ctx) =>
    service.setupEmail(ctx.user, ctx.clientIp),
  );
  mfa.post(
    '/email/confirm',
    { summary: 'Confirm email-code enrolment', body: MfaCodeBody, response: MfaStatusOut },
    (ctx) => service.confirmEmail(ctx.user, ctx.body.code),
  );
  mfa.post(
    '/sms/setup',
    { summary: 'Start SMS-code enrolment', body: SmsSetupBody, response: BackupCodesOut },
    (ctx) => service.setupSms(ctx.user, ctx.body.phone_number, ctx.clientIp),
  );
  mfa.post(
    '/sms/confirm',
    { summary: 'Confirm SMS-code enrolment', body: MfaCodeBody, response: MfaStatusOut },
    (ctx) => service.confirmSms(ctx.user, ctx.body.code),
  );
  mfa.post(
    '/disable',
    {
      summary: 'Remove the second factor (password required)',
      body: MfaPasswordBody,
      response: MfaStatusOut,
    },
    (ctx) => service.disable(ctx.user, ctx.body.password),
  );
  mfa.post(
    '/backup-codes/regenerate',
    {
      summary: 'Replace the backup codes (password required)',
      body: MfaPasswordBody,
      response: BackupCodesOut,
    },
    (ctx) => service.regenerateBackupCodes(ctx.user, ctx.body.password),
  );
  return mfa;
}

/** `DELETE /admin/user/{user_id}/mfa` (SPEC-2 "Administration and self-service"; router name `mfa-admin`). */
export function createMfaAdminRouter(service: MfaService): Router {
  const admin = defineRouter({
    prefix: '/admin/user',
    name: 'mfa-admin',
    tags: ['users'],
    requireSuperuser: true,
    allowPersonalToken: false, // SPEC-2 "Personal access tokens": an MFA route
  });
  admin.delete(
    '/:user_id/mfa',
    {
      summary: "Reset a user's MFA",
      description:
        'Removes the MFA configuration and backup codes; the user logs in with the password alone until they ' +
        'set MFA up again. 400 `user.cannot_reset_own_mfa` for the caller (use /mfa/disable); 404 `user.not_found`.',
      params: UserIdParams,
      status: 204,
      logAs: 'reset the MFA of {user_id}',
    },
    (ctx) => service.resetByAdmin(ctx.caller?.id ?? null, ctx.params.user_id),
  );
  return admin;
}
