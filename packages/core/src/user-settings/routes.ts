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

/** SPEC "Authentication routes": the settings routes (user auth). */
export function createSettingsRouter(service: UserSettingsService): Router {
  const r = defineRouter({ prefix: '/auth/user/settings', name: 'settings', tags: ['settings'] });
  r.get('/schema', { summary: 'Settings UI schema', response: SettingsSchemaOut }, async (ctx) =>
    buildSettingsSchema(service.sections, ctx.t),
  );
  r.get('', { summary: 'Current settings', response: SettingsValuesOut }, (ctx) =>
    service.values(ctx.user.id),
  );
  r.put(
    '/:category/:key',
    {
      summary: 'Change one setting',
      params: SettingPathParams,
      body: SettingValueBody,
      response: SettingsValuesOut,
    },
    (ctx) => service.put(ctx.user.id, ctx.params.category, ctx.params.key, ctx.body.value),
  );
  r.patch(
    '',
    {
      summary: 'Change several settings (all or nothing)',
      body: SettingsPatchBody,
      response: SettingsValuesOut,
    },
    (ctx) => service.patch(ctx.user.id, ctx.body),
  );
  return r;
}
