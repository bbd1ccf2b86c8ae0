import { ACTION_NAME, SECTION_NAME } from './constants.js';

/** Value types of a settings field (SPEC "User settings": type, allowed values, numeric limits). */
export type SettingsFieldType = 'enum' | 'boolean' | 'integer' | 'float' | 'string';

/** A declarative UI action: a plain name, or a name with JSON arguments. */
export type SettingsAction = string | { action: string; args?: Record<string, unknown> };

/** One field of a settings section, as a project writes it. */
export interface SettingsFieldDefinition {
  type: SettingsFieldType;
  /** Allowed values (`enum`; also restricts other types when given). */
  values?: readonly (string | number | boolean)[];
  /** Value when nothing valid is stored; omitted and not nullable means the field is required. */
  default?: string | number | boolean | null;
  /** Label shown in the UI. @default the field name in words */
  label?: string;
  ge?: number;
  le?: number;
  gt?: number;
  lt?: number;
  /** Null is accepted. @default true when `default` is null, else false */
  nullable?: boolean;
  /** UI component. @default select (values), toggle (boolean), number (integer, float), input */
  component?: string;
  /** UI properties passed to the component (texts in them are translated). */
  properties?: Record<string, unknown>;
  /** Declarative actions by UI event name, e.g. `{ change: 'reloadTable' }`. */
  events?: Record<string, SettingsAction>;
  /** Declarative actions run when another field changes, by field name. */
  watch?: Record<string, SettingsAction>;
  /** Plain name of the client-side effect of this value, e.g. `theme`. */
  apply?: string;
  /** Further check of a value that passed type, values and limits (e.g. a BCP 47 tag). */
  validate?: (value: unknown) => boolean;
}

/** A settings section as a project writes it (`defineSettingsSection`). */
export interface SettingsSectionDefinition {
  /** Section name (snake_case or camelCase; the API shows it in camelCase). */
  name: string;
  title?: string;
  icon?: string;
  /** Frontend route of the section's page. */
  route?: string;
  fields: Record<string, SettingsFieldDefinition>;
}

/** An action after validation, as the schema shows it. */
export interface NormalizedAction {
  action: string;
  args: Record<string, unknown>;
}

/** A field after validation: canonical camelCase name and snake_case name for translation keys. */
export interface SettingsField {
  name: string;
  snake: string;
  type: SettingsFieldType;
  values?: readonly (string | number | boolean)[];
  /** Undefined when the field is required. */
  default: string | number | boolean | null | undefined;
  required: boolean;
  nullable: boolean;
  label: string;
  ge?: number;
  le?: number;
  gt?: number;
  lt?: number;
  component?: string;
  properties: Record<string, unknown>;
  events: Record<string, NormalizedAction>;
  watch: Record<string, NormalizedAction>;
  apply: string | null;
  validate?: (value: unknown) => boolean;
}

/** A section after validation (what `defineSettingsSection` returns). */
export interface SettingsSection {
  readonly kind: 'svc.settings-section';
  name: string;
  snake: string;
  title: string;
  icon: string | null;
  route: string | null;
  fields: SettingsField[];
}

/** `font_scale` → `fontScale`. */
export function camelCase(name: string): string {
  return name.replace(/_+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `fontScale` → `font_scale` (SPEC "User settings": section and field names in keys are snake_case). */
export function snakeCase(name: string): string {
  return camelCase(name)
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase();
}

/** `fontScale` → `Font scale`. */
export function words(name: string): string {
  const text = snakeCase(name).replace(/_/g, ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Whether a value passes the field's type, allowed values, limits and own check (SPEC "User settings"). */
export function acceptsValue(field: SettingsField, value: unknown): boolean {
  if (value === null) return field.nullable;
  switch (field.type) {
    case 'boolean':
      if (typeof value !== 'boolean') return false;
      break;
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return false;
      break;
    case 'float':
      if (typeof value !== 'number' || !Number.isFinite(value)) return false;
      break;
    case 'string':
      if (typeof value !== 'string') return false;
      break;
    case 'enum':
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return false;
      break;
  }
  if (field.values && !field.values.includes(value as string | number | boolean)) return false;
  if (typeof value === 'number') {
    if (field.ge !== undefined && !(value >= field.ge)) return false;
    if (field.le !== undefined && !(value <= field.le)) return false;
    if (field.gt !== undefined && !(value > field.gt)) return false;
    if (field.lt !== undefined && !(value < field.lt)) return false;
  }
  return field.validate ? field.validate(value) : true;
}

/**
 * What a field accepts, for the refusal's `params` and message (SPEC "Authentication routes" 5): its type, its
 * `values`, its limits, whether null is accepted, and `allowed`, the same in a notation without words, so it
 * reads alike in every language: `dark, light, auto`, `integer in [10, 100]`, `float in (0, 1)`.
 */
export function acceptedValues(field: SettingsField): Record<string, unknown> {
  const limits = { ge: field.ge, le: field.le, gt: field.gt, lt: field.lt };
  let allowed: string;
  if (field.values) allowed = field.values.map((value) => String(value)).join(', ');
  else if (field.type === 'boolean') allowed = 'true, false';
  else {
    const low = field.gt ?? field.ge;
    const high = field.lt ?? field.le;
    const range =
      low === undefined && high === undefined
        ? ''
        : ` in ${field.gt !== undefined ? '(' : '['}${low ?? '-∞'}, ${high ?? '∞'}${field.lt !== undefined ? ')' : ']'}`;
    allowed = `${field.type}${range}`;
  }
  if (field.nullable) allowed += ', null';
  const params: Record<string, unknown> = { type: field.type, allowed, nullable: field.nullable };
  if (field.values) params.values = [...field.values];
  for (const [name, limit] of Object.entries(limits)) if (limit !== undefined) params[name] = limit;
  return params;
}

const TYPES: readonly SettingsFieldType[] = ['enum', 'boolean', 'integer', 'float', 'string'];

/** A JSON object made of plain data only (no functions, symbols, class instances). */
function isJsonData(value: unknown, depth = 0): boolean {
  if (depth > 20) return false;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((v) => isJsonData(v, depth + 1));
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return false;
    return Object.values(value).every((v) => isJsonData(v, depth + 1));
  }
  return false;
}

function normalizeAction(where: string, value: unknown): NormalizedAction {
  const spec = typeof value === 'string' ? { action: value } : value;
  if (!spec || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new Error(`${where}: an action must be a plain name or {action, args}`);
  }
  const { action, args = {} } = spec as { action?: unknown; args?: unknown };
  // SPEC "User settings": a value that is not a plain action name (for example code) is rejected.
  if (typeof action !== 'string' || !ACTION_NAME.test(action)) {
    throw new Error(`${where}: '${String(action).slice(0, 60)}' is not a plain action name`);
  }
  if (!args || typeof args !== 'object' || Array.isArray(args) || !isJsonData(args)) {
    throw new Error(`${where}: args of '${action}' must be a JSON object`);
  }
  return { action, args: structuredClone(args as Record<string, unknown>) };
}

function normalizeActions(where: string, value: unknown): Record<string, NormalizedAction> {
  if (value === undefined) return {};
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`${where}: must map names to actions`);
  }
  return Object.fromEntries(
    Object.entries(value).map(([name, action]) => [name, normalizeAction(`${where}.${name}`, action)]),
  );
}

function normalizeField(section: string, key: string, def: SettingsFieldDefinition): SettingsField {
  const where = `settings section '${section}', field '${key}'`;
  if (!SECTION_NAME.test(key)) throw new Error(`${where}: the field name must be a plain identifier`);
  if (!def || !TYPES.includes(def.type)) throw new Error(`${where}: type must be one of ${TYPES.join(', ')}`);
  if (def.type === 'enum' && (!Array.isArray(def.values) || def.values.length === 0)) {
    throw new Error(`${where}: an enum needs a non-empty list of values`);
  }
  if (def.apply !== undefined && (typeof def.apply !== 'string' || !ACTION_NAME.test(def.apply))) {
    throw new Error(`${where}: apply '${String(def.apply).slice(0, 60)}' is not a plain name`);
  }
  if (def.properties !== undefined && !isJsonData(def.properties)) {
    throw new Error(`${where}: properties must be JSON data`);
  }
  const nullable = def.nullable ?? def.default === null;
  const field: SettingsField = {
    name: camelCase(key),
    snake: snakeCase(key),
    type: def.type,
    ...(def.values ? { values: [...def.values] } : {}),
    default: def.default ?? (nullable ? null : undefined),
    required: def.default === undefined && !nullable,
    nullable,
    label: def.label ?? words(key),
    ...(def.ge !== undefined ? { ge: def.ge } : {}),
    ...(def.le !== undefined ? { le: def.le } : {}),
    ...(def.gt !== undefined ? { gt: def.gt } : {}),
    ...(def.lt !== undefined ? { lt: def.lt } : {}),
    ...(def.component !== undefined ? { component: def.component } : {}),
    properties: structuredClone(def.properties ?? {}),
    events: normalizeActions(`${where}, events`, def.events),
    watch: normalizeActions(`${where}, watch`, def.watch),
    apply: def.apply ?? null,
    ...(def.validate ? { validate: def.validate } : {}),
  };
  if (field.default !== undefined && !acceptsValue(field, field.default)) {
    throw new Error(
      `${where}: the default ${JSON.stringify(field.default)} does not pass the field's own rules`,
    );
  }
  return field;
}

/**
 * Declares a section of per-user settings (SPEC "User settings"). Throws an Error naming the section and
 * field when a definition is invalid, e.g. an `events`/`watch` action that is not a plain name.
 * @example
 * defineSettingsSection({
 *   name: 'notifications', title: 'Notifications', icon: 'bell', route: '/settings/notifications',
 *   fields: { emailDigest: { type: 'enum', values: ['off', 'daily', 'weekly'], default: 'daily' } },
 * });
 */
export function defineSettingsSection(definition: SettingsSectionDefinition): SettingsSection {
  const name = definition?.name;
  if (typeof name !== 'string' || !SECTION_NAME.test(name)) {
    throw new Error(`settings section '${String(name)}': the name must be a plain identifier`);
  }
  if (!definition.fields || typeof definition.fields !== 'object') {
    throw new Error(`settings section '${name}': fields are required`);
  }
  const fields = Object.entries(definition.fields).map(([key, def]) => normalizeField(name, key, def));
  const seen = new Set<string>();
  for (const field of fields) {
    if (seen.has(field.name))
      throw new Error(`settings section '${name}': field '${field.name}' is defined twice`);
    seen.add(field.name);
  }
  return Object.freeze({
    kind: 'svc.settings-section' as const,
    name: camelCase(name),
    snake: snakeCase(name),
    title: definition.title ?? words(name),
    icon: definition.icon ?? null,
    route: definition.route ?? null,
    fields,
  });
}

/** A section given to `createApp`: a `defineSettingsSection` result, or a plain definition. */
export function toSection(value: unknown): SettingsSection {
  if (value && typeof value === 'object' && (value as SettingsSection).kind === 'svc.settings-section') {
    return value as SettingsSection;
  }
  return defineSettingsSection(value as SettingsSectionDefinition);
}
