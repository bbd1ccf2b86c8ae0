import { SvcError } from '../kernel/errors/svc-error.js';
import type { AuthUser } from '../kernel/ports.js';
import { defineRouter, type Router } from '../kernel/router.js';
import {
  SettingPathParams,
  SettingsPatchBody,
  SettingsSchemaOut,
  SettingsValuesOut,
  SettingValueBody,
} from './schemas.js';
import type { UserSettingsService } from './service.js';
import { buildSettingsSchema } from './ui-schema.js';

/** The guard guarantees a user on these routes, except with `global_noauth`: then nobody holds settings (401). */
function userOf(ctx: { user: AuthUser | null }): AuthUser {
  if (!ctx.user) {
    throw new SvcError('auth.not_authenticated', {
      loc: ['header', 'Authorization'],
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
  }
  return ctx.user;
}

/** SPEC "Authentication routes": the settings routes (user auth). */
export function createSettingsRouter(service: UserSettingsService): Router {
  const r = defineRouter({ prefix: '/auth/user/settings', name: 'settings', tags: ['settings'] });
  r.get('/schema', { summary: 'Settings UI schema', response: SettingsSchemaOut }, async (ctx) =>
    buildSettingsSchema(service.sections, ctx.t),
  );
  r.get('', { summary: 'Current settings', response: SettingsValuesOut }, (ctx) =>
    service.values(userOf(ctx).id),
  );
  r.put(
    '/:category/:key',
    {
      summary: 'Change one setting',
      params: SettingPathParams,
      body: SettingValueBody,
      response: SettingsValuesOut,
    },
    (ctx) => service.put(userOf(ctx).id, ctx.params.category, ctx.params.key, ctx.body.value),
  );
  r.patch(
    '',
    {
      summary: 'Change several settings (all or nothing)',
      body: SettingsPatchBody,
      response: SettingsValuesOut,
    },
    (ctx) => service.patch(userOf(ctx).id, ctx.body),
  );
  return r;
}
