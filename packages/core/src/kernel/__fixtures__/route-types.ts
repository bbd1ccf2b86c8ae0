// Compiled by router-types.test.ts: every line marked @ts-expect-error must be an error, every other line
// must compile. It is the contract of ctx.user, ctx.params and the module options in types.
import { z } from 'zod';
import { createApp } from '../../app/create-app.js';
import '../../user-settings/builtin.js';
import type {} from '../../index.js';
import type { AuthUser, OrganizationContext } from '../ports.js';
import { defineRouter } from '../router.js';

const exact = <T>(value: T) => value;

const notes = defineRouter({ prefix: '/notes', permissions: ['notes.read'] });

notes.get('/', {}, (ctx) => {
  // Not public: the guard guarantees a user.
  exact<AuthUser>(ctx.user);
  return ctx.user.username;
});

notes.get('/about', { public: true }, (ctx) => {
  // @ts-expect-error a public route may have no user
  exact<AuthUser>(ctx.user);
  return ctx.user?.username ?? null;
});

notes.post('/:noteId/archive', { logAs: 'archived {noteId}' }, (ctx) => {
  exact<string>(ctx.params.noteId);
  // @ts-expect-error only the path's parameters exist
  return ctx.params.nodeId;
});

notes.get('/:a/items/:b', {}, (ctx) => `${ctx.params.a}${ctx.params.b}`);

notes.get('/:noteId', { params: z.object({ noteId: z.coerce.number() }) }, (ctx) => {
  // A params schema wins over the path.
  exact<number>(ctx.params.noteId);
  return null;
});

notes.post('/', { body: z.object({ text: z.string() }) }, (ctx) => exact<string>(ctx.body.text));

const open = defineRouter({ prefix: '/open', public: true });
open.get('/', {}, (ctx) => {
  // @ts-expect-error a public router's routes may have no user
  exact<AuthUser>(ctx.user);
  return ctx.caller?.id ?? null;
});

createApp({
  routers: [notes, open],
  mfaSender: { sendEmailCode: () => undefined, sendSmsCode: () => undefined },
  settingsSections: [],
  eventsPingIntervalMs: 1000,
});

// @ts-expect-error an option no module declares
createApp({ mfaSendr: undefined });

declare module '../../index.js' {
  interface UserSettingPaths {
    'notes.sortOrder': 'newest' | 'oldest';
  }
}

notes.get('/settings', {}, async (ctx) => {
  exact<'dark' | 'light' | 'auto'>(await ctx.settings.get(ctx.user, 'appearance.theme'));
  exact<number>(await ctx.settings.get(ctx.user, 'preferences.tablePageSize'));
  // A project's own section, declared by merging.
  exact<'newest' | 'oldest'>(await ctx.settings.get(ctx.user, 'notes.sortOrder'));
  // @ts-expect-error the value of a known path is typed
  exact<number>(await ctx.settings.get(ctx.user, 'appearance.theme'));
  return null;
});

createApp({
  // @ts-expect-error a setting name that does not exist (SPEC "Configuration")
  settings: { acess_token_expire_minutes: 5 },
});
createApp({ settings: { access_token_expire_minutes: 5 } });

// SPEC-3 §2: `ctx.organization` is there on an organization route (router or route), else possibly null.
const scoped = defineRouter({ prefix: '/scoped', organization: true });
scoped.get('/', {}, (ctx) => exact<OrganizationContext>(ctx.organization).slug);
notes.get('/in-org', { organization: true, organizationPermissions: ['notes.read'] }, (ctx) => {
  exact<string | null>(ctx.organization.role);
  return ctx.organization.permissions;
});
notes.get('/no-org', {}, (ctx) => {
  // @ts-expect-error a route without `organization` may have none
  exact<OrganizationContext>(ctx.organization);
  return null;
});
createApp({ routers: [scoped], organizationRoles: { billing: ['invoices.read'] } });
