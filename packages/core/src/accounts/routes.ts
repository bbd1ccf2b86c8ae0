import { z } from 'zod';
import type { IssueTokens } from '../kernel/browser-session.js';
import { defineRouter, type Router } from '../kernel/router.js';
import { toUserOut, UserOut } from '../kernel/user-out.js';
import {
  AcceptBody,
  AccountExportOut,
  ForgotBody,
  InviteBody,
  ResetBody,
  SelfDeleteBody,
  VerifyBody,
} from './schemas.js';
import { exportDisposition, type SelfService } from './self-service.js';
import type { AccountService } from './service.js';

const TokenPairOut = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  refresh_token: z.string(),
});

/**
 * Password reset, email verification, invitations and self-service (SPEC-2 "Routes"; router names `accounts`
 * and `accounts-admin` for `disable_core_routers`).
 */
export function createAccountsRouter(
  service: AccountService,
  self: SelfService,
  issue: IssueTokens,
): Router[] {
  const accounts = defineRouter({ prefix: '/auth', name: 'accounts', tags: ['accounts'] });
  accounts.post(
    '/user/email/verify-request',
    {
      summary: 'Ask for a verification link to the own email',
      description:
        '202; 400 `user.no_email`; 409 `user.email_already_verified`; 429 `account.mail_cooldown` with ' +
        '`Retry-After` within `account_mail_cooldown_seconds` of the last link.',
      status: 202,
    },
    async (ctx) => {
      await service.requestVerification(ctx.user.id);
    },
  );
  accounts.post(
    '/email/verify',
    {
      public: true,
      summary: 'Verify the email with the link of a verification mail',
      description:
        '204; 400 `auth.verify_token_invalid` when the token is unknown, used, expired or the address changed.',
      body: VerifyBody,
      status: 204,
    },
    (ctx) => service.verifyEmail(ctx.body.token),
  );
  accounts.post(
    '/password/forgot',
    {
      public: true,
      summary: 'Ask for a password-reset link',
      description:
        'Always 202 without a body, for unknown addresses and inactive accounts too; the mail goes out after ' +
        'the answer. Counts against `auth_rate_limit`; one mail per account and `account_mail_cooldown_seconds`.',
      body: ForgotBody,
      status: 202,
    },
    async (ctx) => {
      await service.forgot(ctx.body.email, ctx.clientIp);
      ctx.setStatus(202);
    },
  );
  accounts.post(
    '/password/reset',
    {
      public: true,
      summary: 'Set a new password with a reset link',
      description:
        'Sets the password, ends every login (refresh tokens, access tokens issued before, event sockets), ' +
        'lifts a login lock and verifies the email; `revokeTokens: true` deletes the personal access tokens ' +
        'too. A refused password leaves the token usable.',
      body: ResetBody,
      status: 204,
    },
    (ctx) => service.reset(ctx.body.token, ctx.body.newPassword, { revokeTokens: ctx.body.revokeTokens }),
  );
  accounts.post(
    '/invitation/accept',
    {
      public: true,
      summary: 'Accept an invitation: choose a password and log in',
      description:
        'A token pair as `POST /auth/token` gives (not enveloped unless `wrap_auth_token_response`); sets the ' +
        'password and the verified email. 400 `auth.invitation_invalid`; 422 password policy (the token stays).',
      body: AcceptBody,
      response: TokenPairOut,
      envelope: 'auth-token',
    },
    // SPEC-3 §5: with `X-Svc-Session: cookie`, the cookies and `{user}` instead of the pair.
    (ctx) => issue(ctx, () => service.acceptInvitation(ctx.body.token, ctx.body.password)),
  );
  accounts.get(
    '/user/export',
    {
      summary: 'Download everything stored about the own account',
      description:
        'JSON, not enveloped, as an attachment (`svc-account-<username>.json`): `user`, `settings`, `groups`, ' +
        '`permissions` ({direct, effective}), `mfa` ({enabled, method}), `sessions`, `personalTokens`, ' +
        '`passkeys`, `activity` (the newest 1,000 entries); a part no module stores is `[]`. No secrets.',
      response: AccountExportOut,
      envelope: false,
      // A personal token reads no sessions or tokens (SPEC-2 section 4): neither does it read them all here.
      allowPersonalToken: false,
    },
    async (ctx) => {
      const data = await self.exportAccount(ctx.user.id);
      ctx.setHeader('Content-Disposition', exportDisposition(ctx.user.username));
      // Personal data: kept by no cache on the way.
      ctx.setHeader('Cache-Control', 'no-store');
      return data;
    },
  );
  accounts.delete(
    '/user',
    {
      summary: 'Delete the own account',
      description:
        '204 with the password (and `code`, a TOTP or backup code, while MFA is active): the account goes as ' +
        'with `DELETE /admin/user/{user_id}`. 403 `auth.self_delete_disabled` unless `self_delete_enabled`; ' +
        '400 `auth.password_incorrect`, `auth.mfa_code_required`, `auth.mfa_code_incorrect`, ' +
        '`user.last_superuser`. Wrong passwords and codes count on the login lock.',
      body: SelfDeleteBody,
      status: 204,
      allowPersonalToken: false,
    },
    (ctx) => self.deleteOwnAccount(ctx.user.id, ctx.body.password, ctx.body.code),
  );

  const admin = defineRouter({
    prefix: '/admin/user',
    name: 'accounts-admin',
    tags: ['users'],
    requireSuperuser: true,
  });
  admin.post(
    '/invite',
    {
      summary: 'Invite a user by email',
      description:
        '201 the new user (active, no usable password) and an invitation mail. The address of a pending ' +
        'invitation gets a new link replacing the old one: 200 the user. Any other account’s address: 400 ' +
        '`user.email_exists`; a taken username: 400 `auth.username_taken`.',
      body: InviteBody,
      response: UserOut,
      status: 201,
      logAs: 'invited a user by {username}',
      // SPEC-3 §7 rule 3: a personal token never invites (it could send an account to the thief's mailbox).
      allowPersonalToken: false,
    },
    async (ctx) => {
      const { created, user } = await service.invite(ctx.user.username, ctx.body);
      if (!created) ctx.setStatus(200);
      return toUserOut(user);
    },
  );
  return [accounts, admin];
}
