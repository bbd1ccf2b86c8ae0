import { SvcError } from '../kernel/errors/svc-error.js';
import { isPersonalTokenUser } from '../kernel/ports.js';
import { defineRouter } from '../kernel/router.js';
import { UserIdParams, UserListQuery, UserOut, UserPage, UserPatchBody } from './schemas.js';
import type { UserService } from './service.js';

/** `/admin/user` routes (SPEC "User administration"): superuser only, thin handlers over the service. */
export function createUsersRouter(service: UserService) {
  const users = defineRouter({
    prefix: '/admin/user',
    name: 'users',
    tags: ['users'],
    requireSuperuser: true,
  });
  users.get(
    '/',
    {
      summary: 'List users',
      description: '`search` matches username, email, first and last name; default `orderBy=-created_at`.',
      query: UserListQuery,
      response: UserPage,
    },
    (ctx) => service.list(ctx.query),
  );
  users.get('/:user_id', { summary: 'Get a user', params: UserIdParams, response: UserOut }, (ctx) =>
    service.get(ctx.params.user_id),
  );
  users.patch(
    '/:user_id',
    { summary: 'Update a user', params: UserIdParams, body: UserPatchBody, response: UserOut },
    (ctx) => {
      // SPEC-2 "Personal access tokens": a token never sets a password or an email (the rule of the credential
      // routes), through administration neither; the other fields stay open to a superuser's token.
      if (
        isPersonalTokenUser(ctx.caller) &&
        (ctx.body.password !== undefined || ctx.body.email !== undefined)
      ) {
        throw new SvcError('access.token_not_allowed');
      }
      return service.update(ctx.caller, ctx.params.user_id, ctx.body);
    },
  );
  users.delete('/:user_id', { summary: 'Delete a user', params: UserIdParams, status: 204 }, async (ctx) => {
    await service.remove(ctx.caller, ctx.params.user_id);
  });
  return users;
}
