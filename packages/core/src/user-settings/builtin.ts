import {
  LOCALE_MAX_LENGTH,
  TABLE_PAGE_SIZE_MAX,
  TABLE_PAGE_SIZE_MIN,
  TIMEZONE_MAX_LENGTH,
} from './constants.js';
import { defineSettingsSection, type SettingsSection } from './define.js';

/** A BCP 47 language tag (`en`, `de-CH`, `zh-Hant-TW`); `Intl` parses it without guessing. */
export function isLanguageTag(value: unknown): boolean {
  if (typeof value !== 'string' || value.length === 0 || value.length > LOCALE_MAX_LENGTH) return false;
  if (!/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(value)) return false;
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

const knownZones = new Map<string, boolean>();

/** An IANA timezone name known to the runtime (`Europe/Berlin`, `UTC`); offsets such as `+01:00` are not names. */
export function isTimeZoneName(value: unknown): boolean {
  if (typeof value !== 'string' || value.length === 0 || value.length > TIMEZONE_MAX_LENGTH) return false;
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(value)) return false;
  let known = knownZones.get(value);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: value });
      known = true;
    } catch {
      known = false;
    }
    if (knownZones.size < 1000) knownZones.set(value, known);
  }
  return known;
}

declare module '../kernel/router.js' {
  /** The built-in sections' fields (SPEC "User settings"), as `ctx.settings.get` returns them. */
  interface UserSettingPaths {
    'appearance.theme': 'dark' | 'light' | 'auto';
    'appearance.accent': 'teal' | 'indigo' | 'amber' | 'violet' | 'coral';
    'appearance.density': 'comf' | 'compact';
    'appearance.fontScale': 'sm' | 'md' | 'lg';
    'appearance.reduceMotion': boolean;
    'preferences.locale': string | null;
    'preferences.timezone': string | null;
    'preferences.dateFormat': 'auto' | 'dmy' | 'mdy' | 'ymd';
    'preferences.tablePageSize': number;
    'audit.disableActivityLog': boolean;
  }
}

/** SPEC "User settings", built-in sections (texts in the catalogs under `settings.<section>.…`). */
export const builtinSections: SettingsSection[] = [
  defineSettingsSection({
    name: 'appearance',
    title: 'Appearance',
    icon: 'palette',
    route: '/settings/appearance',
    fields: {
      theme: {
        type: 'enum',
        values: ['dark', 'light', 'auto'],
        default: 'auto',
        label: 'Theme',
        apply: 'theme',
      },
      accent: {
        type: 'enum',
        values: ['teal', 'indigo', 'amber', 'violet', 'coral'],
        default: 'teal',
        label: 'Accent colour',
        apply: 'accent',
      },
      density: {
        type: 'enum',
        values: ['comf', 'compact'],
        default: 'comf',
        label: 'Density',
        apply: 'density',
      },
      fontScale: {
        type: 'enum',
        values: ['sm', 'md', 'lg'],
        default: 'md',
        label: 'Font size',
        apply: 'fontScale',
      },
      reduceMotion: { type: 'boolean', default: false, label: 'Reduce motion', apply: 'reduceMotion' },
    },
  }),
  defineSettingsSection({
    name: 'preferences',
    title: 'Preferences',
    icon: 'tune',
    route: '/settings/preferences',
    fields: {
      locale: {
        type: 'string',
        default: null,
        label: 'Language',
        apply: 'locale',
        validate: isLanguageTag,
        properties: { placeholder: 'Automatic', hint: 'A language tag such as en or de-CH' },
      },
      timezone: {
        type: 'string',
        default: null,
        label: 'Time zone',
        validate: isTimeZoneName,
        properties: { placeholder: "Browser's time zone", hint: 'An IANA name such as Europe/Berlin' },
      },
      dateFormat: {
        type: 'enum',
        values: ['auto', 'dmy', 'mdy', 'ymd'],
        default: 'auto',
        label: 'Date format',
      },
      tablePageSize: {
        type: 'integer',
        ge: TABLE_PAGE_SIZE_MIN,
        le: TABLE_PAGE_SIZE_MAX,
        default: 25,
        label: 'Rows per page',
      },
    },
  }),
  defineSettingsSection({
    name: 'audit',
    title: 'Activity log',
    icon: 'history',
    route: '/settings/audit',
    fields: {
      disableActivityLog: {
        type: 'boolean',
        default: false,
        label: 'Disable activity log',
        properties: { hint: 'Stops recording your write requests in the activity log (superusers only).' },
      },
    },
  }),
];
