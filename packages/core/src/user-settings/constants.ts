/** SPEC "User settings": an action (`events`, `watch`, `apply`) is a plain name: a letter, then letters, digits, `_`, `.`, `-`. */
export const ACTION_NAME = /^[A-Za-z][A-Za-z0-9_.-]*$/;

/** Section and field names: identifiers in snake_case or camelCase (they become API keys and translation keys). */
export const SECTION_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** SPEC "Limits": activity-log opt-out cache, 30 seconds (the `userSettings` port caches every read for as long). */
export const SETTINGS_CACHE_TTL_SECONDS = 30;

/** SPEC "Limits": `tablePageSize` 10 to 100. */
export const TABLE_PAGE_SIZE_MIN = 10;
export const TABLE_PAGE_SIZE_MAX = 100;

/** Longest accepted locale tag and timezone name (BCP 47 tags in practice stay far below). */
export const LOCALE_MAX_LENGTH = 35;
export const TIMEZONE_MAX_LENGTH = 64;

/**
 * SPEC "User settings", translation keys: texts in `properties` that the schema translates and gives a
 * `propertyKeys` entry.
 */
export const TEXT_PROPERTIES = [
  'label',
  'hint',
  'placeholder',
  'title',
  'caption',
  'description',
  'prefix',
  'suffix',
  'errorMessage',
  'message',
] as const;
