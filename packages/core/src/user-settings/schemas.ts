import { z } from 'zod';

/** `{category}` and `{key}`: section and field names in snake_case or camelCase (SPEC rule 5). */
export const SettingPathParams = z.object({ category: z.string().max(100), key: z.string().max(100) });

/** `{value}`: string, number, boolean or null; the field decides what it accepts (422 `user.settings_value_invalid`). */
export const SettingValueBody = z.object({ value: z.unknown() });

/** `{<section>: {<key>: <value>, ...}, ...}`. */
export const SettingsPatchBody = z.record(z.string().max(100), z.record(z.string().max(100), z.unknown()));

/** Current values nested by section, camelCase keys. */
export const SettingsValuesOut = z.record(z.string(), z.record(z.string(), z.unknown()));

const Action = z.object({ action: z.string(), args: z.record(z.string(), z.unknown()) });

export const SettingsSchemaOut = z.object({
  sections: z.array(
    z.object({
      name: z.string(),
      title: z.string(),
      titleKey: z.string(),
      icon: z.string().nullable(),
      route: z.string().nullable(),
      fields: z.array(
        z.object({
          name: z.string(),
          type: z.string(),
          label: z.string(),
          labelKey: z.string(),
          component: z.string(),
          apply: z.string().nullable(),
          properties: z.record(z.string(), z.unknown()),
          propertyKeys: z.record(z.string(), z.string()),
          optionKeys: z.record(z.string(), z.string()).optional(),
          events: z.record(z.string(), Action),
          watch: z.record(z.string(), Action),
          required: z.boolean(),
          nullable: z.boolean(),
          default: z.unknown().optional(),
        }),
      ),
    }),
  ),
});
