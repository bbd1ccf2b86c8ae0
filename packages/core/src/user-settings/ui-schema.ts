import type { Translate } from '../kernel/i18n/index.js';
import { TEXT_PROPERTIES } from './constants.js';
import { words, type NormalizedAction, type SettingsField, type SettingsSection } from './define.js';

/** One field of `GET /auth/user/settings/schema`. */
export interface FieldSchema {
  name: string;
  type: string;
  label: string;
  labelKey: string;
  component: string;
  apply: string | null;
  properties: Record<string, unknown>;
  propertyKeys: Record<string, string>;
  optionKeys?: Record<string, string>;
  events: Record<string, NormalizedAction>;
  watch: Record<string, NormalizedAction>;
  required: boolean;
  nullable: boolean;
  default?: unknown;
}

/** One section of the schema. */
export interface SectionSchema {
  name: string;
  title: string;
  titleKey: string;
  icon: string | null;
  route: string | null;
  fields: FieldSchema[];
}

/** SPEC "User settings": values → select, boolean → toggle, integer or float → number, else input. */
export function inferComponent(field: SettingsField): string {
  if (field.component) return field.component;
  if (field.values) return 'select';
  if (field.type === 'boolean') return 'toggle';
  if (field.type === 'integer' || field.type === 'float') return 'number';
  return 'input';
}

function numericLimits(field: SettingsField): { min?: number; max?: number } {
  const step = field.type === 'integer' ? 1 : 0;
  const min = field.ge ?? (field.gt !== undefined ? field.gt + step : undefined);
  const max = field.le ?? (field.lt !== undefined ? field.lt - step : undefined);
  return { ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
}

function fieldSchema(section: SettingsSection, field: SettingsField, t: Translate): FieldSchema {
  const base = `settings.${section.snake}.${field.snake}`;
  const component = inferComponent(field);
  const properties: Record<string, unknown> = structuredClone(field.properties);
  const propertyKeys: Record<string, string> = {};
  // SPEC "User settings": texts in properties are translated in the request language, falling back to code.
  for (const name of TEXT_PROPERTIES) {
    if (typeof properties[name] !== 'string') continue;
    propertyKeys[name] = `${base}.properties.${name}`;
    properties[name] = t(propertyKeys[name], undefined, properties[name]);
  }
  let optionKeys: Record<string, string> | undefined;
  if (field.values) {
    optionKeys = Object.fromEntries(field.values.map((v) => [String(v), `${base}.options.${String(v)}`]));
    if (component === 'select') {
      properties.options ??= field.values.map((value) => ({
        value,
        label: t(optionKeys![String(value)]!, undefined, words(String(value))),
      }));
      properties.emitValue ??= true;
      properties.mapOptions ??= true;
    }
  }
  if (field.type === 'integer' || field.type === 'float') {
    for (const [name, value] of Object.entries(numericLimits(field))) properties[name] ??= value;
  }
  const labelKey = `${base}.label`;
  return {
    name: field.name,
    type: field.type,
    label: t(labelKey, undefined, field.label),
    labelKey,
    component,
    apply: field.apply,
    properties,
    propertyKeys,
    ...(optionKeys ? { optionKeys } : {}),
    events: structuredClone(field.events),
    watch: structuredClone(field.watch),
    required: field.required,
    nullable: field.nullable,
    // SPEC "User settings": the default as JSON including null, when the field is not required.
    ...(field.required ? {} : { default: field.default ?? null }),
  };
}

/** The settings UI schema in the request language (SPEC "User settings", settings schema). */
export function buildSettingsSchema(
  sections: SettingsSection[],
  t: Translate,
): { sections: SectionSchema[] } {
  return {
    sections: sections.map((section) => {
      const titleKey = `settings.${section.snake}.title`;
      return {
        name: section.name,
        title: t(titleKey, undefined, section.title),
        titleKey,
        icon: section.icon,
        route: section.route,
        fields: section.fields.map((field) => fieldSchema(section, field, t)),
      };
    }),
  };
}
