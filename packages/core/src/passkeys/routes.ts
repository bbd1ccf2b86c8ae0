import type { IssueTokens } from '../kernel/browser-session.js';
import { defineRouter, type Router } from '../kernel/router.js';
import type { PasskeyLogin } from './login.js';
import type { Registration } from './registration.js';
import {
  CreationOptionsOut,
  LoginOptionsBody,
  LoginOptionsOut,
  MfaOptionsBody,
  PasskeyIdParams,
  UserPasskeyParams,
  UserPasskeysParams,
  PasskeyListOut,
  PasskeyOut,
  PasskeyTokenBody,
  RegisterBody,
  RenameBody,
  RequestOptionsOut,
  TokenPairOut,
} from './schemas.js';

/**
 * The caller's passkeys (SPEC-2 "Passkeys"; router name `passkeys`). Credential routes: a personal access
 * token is refused there (SPEC-2 section 4), like on the password and MFA routes.
 */
export function createPasskeysRouter(registration: Registration): Router {
  const passkeys = defineRouter({
    prefix: '/auth/passkeys',
    name: 'passkeys',
    tags: ['passkeys'],
    allowPersonalToken: false,
  });
  passkeys.post(
    '/register/options',
    {
      summary: 'Start registering a passkey',
      description:
        'Creation options for `navigator.credentials.create()`: user verification required, resident key ' +
        'preferred, the caller’s passkeys excluded. The challenge works once within 5 minutes. 403 ' +
        '`auth.reauthentication_required` unless the session’s login is recent; 409 `auth.passkey_limit` at ' +
        '`passkeys_max_per_user`.',
      response: CreationOptionsOut,
      // SPEC-3 §7 rule 1: a passkey is a lasting credential (its login skips MFA): a recent login only.
      requireRecentLogin: true,
    },
    (ctx) => registration.options(ctx.user),
  );
  passkeys.post(
    '/register',
    {
      summary: 'Register a passkey',
      description:
        'The JSON of the created credential; 400 `auth.passkey_invalid` when it does not verify. 403 ' +
        '`auth.reauthentication_required` unless the session’s login is recent; 409 `auth.passkey_limit` at ' +
        '`passkeys_max_per_user`.',
      body: RegisterBody,
      requireRecentLogin: true, // SPEC-3 §7 rule 1
      response: PasskeyOut,
      status: 201,
      logAs: 'registered a passkey',
    },
    (ctx) => registration.register(ctx.user, ctx.body.response, ctx.body.name),
  );
  passkeys.get('/', { summary: 'The caller’s passkeys', response: PasskeyListOut }, (ctx) =>
    registration.list(ctx.user),
  );
  passkeys.patch(
    '/:id',
    { summary: 'Rename a passkey', params: PasskeyIdParams, body: RenameBody, response: PasskeyOut },
    (ctx) => registration.rename(ctx.user, ctx.params.id, ctx.body.name),
  );
  passkeys.delete(
    '/:id',
    {
      summary: 'Delete a passkey',
      description: '404 `auth.passkey_not_found` for an unknown id or another user’s passkey.',
      params: PasskeyIdParams,
      status: 204,
      logAs: 'deleted passkey {id}',
    },
    (ctx) => registration.remove(ctx.user, ctx.params.id),
  );
  return passkeys;
}

/**
 * A user's passkeys for superusers (router name `passkeys-admin`): an svc extension of SPEC-3 §6, whose console
 * shows a user's passkeys through the public API (docs/passkeys.md "Administration").
 */
export function createPasskeyAdminRouter(registration: Registration): Router {
  const admin = defineRouter({
    prefix: '/admin/user',
    name: 'passkeys-admin',
    tags: ['passkeys'],
    requireSuperuser: true,
    allowPersonalToken: false,
  });
  admin.get(
    '/:user_id/passkeys',
    {
      summary: "A user's passkeys",
      description: 'The items of `GET /auth/passkeys`. 404 `user.not_found` for an unknown user.',
      params: UserPasskeysParams,
      response: PasskeyListOut,
    },
    (ctx) => registration.listOfUser(ctx.params.user_id),
  );
  admin.delete(
    '/:user_id/passkeys/:id',
    {
      summary: "Delete a user's passkey",
      description:
        'The effect of the owner’s `DELETE /auth/passkeys/{id}`. 404 `user.not_found` for an unknown user, ' +
        '`auth.passkey_not_found` for a passkey not theirs.',
      params: UserPasskeyParams,
      status: 204,
      logAs: 'deleted passkey {id} of user {user_id}',
    },
    (ctx) => registration.removeOfUser(ctx.params.user_id, ctx.params.id),
  );
  return admin;
}

/** Passwordless login and the MFA step's options (SPEC-2 "Passkeys"; router name `passkey-login`). */
export function createPasskeyLoginRouter(login: PasskeyLogin, issue: IssueTokens): Router {
  const router = defineRouter({ name: 'passkey-login', tags: ['passkeys'], public: true });
  router.post(
    '/auth/passkey/options',
    {
      summary: 'Start a passkey login',
      description:
        'Request options for `navigator.credentials.get()`; without a username, for a discoverable credential. ' +
        'Send `challengeId` back with the assertion within 5 minutes.',
      body: LoginOptionsBody,
      response: LoginOptionsOut,
    },
    (ctx) => login.options(ctx.body.username, ctx.clientIp),
  );
  router.post(
    '/auth/passkey/token',
    {
      summary: 'Log in with a passkey',
      description:
        'A token pair like `POST /auth/token` (a passkey with user verification is both factors). Every ' +
        'failure is 401 `auth.passkey_invalid`.',
      body: PasskeyTokenBody,
      response: TokenPairOut,
      envelope: 'auth-token', // SPEC "Response envelope": OAuth2 token shape
    },
    // SPEC-3 §5: with `X-Svc-Session: cookie`, the cookies and `{user}` instead of the pair.
    (ctx) => issue(ctx, () => login.token(ctx.body.challengeId, ctx.body.response, ctx.clientIp)),
  );
  router.post(
    '/mfa/webauthn/options',
    {
      summary: 'Passkey options for the MFA step',
      description:
        'Request options over the passkeys of the `mfa_token`’s user; answer with `POST /mfa/verify` and ' +
        '`{mfa_token, webauthn}`. 400 `mfa.no_passkey` when the user has none.',
      body: MfaOptionsBody,
      response: RequestOptionsOut,
    },
    (ctx) => login.mfaOptions(ctx.body.mfa_token, ctx.clientIp),
  );
  return router;
}
