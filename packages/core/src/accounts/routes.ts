import { defineRouter, type Router } from '../kernel/router.js';
import { ForgotBody, ResetBody } from './schemas.js';
import type { AccountService } from './service.js';

/** The password-reset routes of SPEC-2 "Routes" (router name `accounts` for `disable_core_routers`). */
export function createAccountsRouter(service: AccountService): Router {
  const accounts = defineRouter({ prefix: '/auth', name: 'accounts', tags: ['accounts'], public: true });
  accounts.post(
    '/password/forgot',
    {
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
      summary: 'Set a new password with a reset link',
      description:
        'Sets the password, ends every login (refresh tokens, access tokens issued before, event sockets), ' +
        'lifts a login lock and verifies the email. A refused password leaves the token usable.',
      body: ResetBody,
      status: 204,
    },
    (ctx) => service.reset(ctx.body.token, ctx.body.newPassword),
  );
  return accounts;
}
