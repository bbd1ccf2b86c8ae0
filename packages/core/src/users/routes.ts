import { defineRouter } from '../kernel/router.js';
import { UserIdParams, UserListQuery, UserOut, UserPage, UserPatchBody } from './schemas.js';
import type { UserService } from './service.js';

/** The fields of `PATCH /admin/user/{user_id}` a personal token may not name (SPEC-3 §7 rule 3). */
const TOKEN_REFUSED_FIELDS = ['password', 'email', 'isSuperuser', 'isStaff', 'isActive'] as const;

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
    {
      summary: 'Update a user',
      params: UserIdParams,
      body: UserPatchBody,
      response: UserOut,
      // SPEC-2 "Personal access tokens": a token never sets a password or an email (the rule of the credential
      // routes), through administration neither; SPEC-3 §7 rule 3: nor the flags that raise or end an account
      // (a superuser's token would make a second superuser, who could then set the owner's password). The
      // names and profile fields stay open to it.
      personalTokenRefusedFields: TOKEN_REFUSED_FIELDS,
    },
    (ctx) => service.update(ctx.caller, ctx.params.user_id, ctx.body),
  );
  users.delete('/:user_id', { summary: 'Delete a user', params: UserIdParams, status: 204 }, async (ctx) => {
    await service.remove(ctx.caller, ctx.params.user_id);
  });
  return users;
}
