import type { Cache } from '../kernel/cache/cache.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import type { Logger } from '../kernel/log/logger.js';
import type { UserSettingsReader } from '../kernel/ports.js';
import { SETTINGS_CACHE_TTL_SECONDS } from './constants.js';
import {
  acceptedValues,
  acceptsValue,
  camelCase,
  type SettingsField,
  type SettingsSection,
} from './define.js';
import type { SettingsDocument, SettingsStore } from './store.js';

/** Current values by section and field, camelCase keys (SPEC "Authentication routes", settings). */
export type SettingsValues = Record<string, Record<string, unknown>>;

export interface UserSettingsServiceDeps {
  sections: SettingsSection[];
  store: SettingsStore;
  cache: Cache;
  log: Logger;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);

/** The key a name is stored under: camelCase, or the snake_case spelling older documents used. */
function storedKey(container: Record<string, unknown>, camel: string, snake: string): string {
  return camel in container || !(snake in container) ? camel : snake;
}

export const cacheKey = (userId: string) => `user_settings:${userId}`;

/** Per-user settings: read with defaults, validated writes, the cached `userSettings` port. */
export function createUserSettingsService({ sections, store, cache, log }: UserSettingsServiceDeps) {
  function findSection(name: string): SettingsSection | undefined {
    const camel = camelCase(name);
    return sections.find((s) => s.name === camel);
  }
  function findField(section: SettingsSection, key: string): SettingsField | undefined {
    const camel = camelCase(key);
    return section.fields.find((f) => f.name === camel);
  }

  /**
   * SPEC "User settings": a stored value that no longer passes validation reads as the default; stored
   * fields that no longer exist (e.g. `preferences.theme`) are ignored here and kept in the document.
   */
  function resolve(doc: SettingsDocument): SettingsValues {
    const values: SettingsValues = {};
    for (const section of sections) {
      const stored = doc[storedKey(doc, section.name, section.snake)];
      const container = isObject(stored) ? stored : {};
      const out: Record<string, unknown> = {};
      for (const field of section.fields) {
        const value = container[storedKey(container, field.name, field.snake)];
        out[field.name] = value !== undefined && acceptsValue(field, value) ? value : (field.default ?? null);
      }
      values[section.name] = out;
    }
    return values;
  }

  function sectionOrThrow(name: string, loc: (string | number)[]): SettingsSection {
    const section = findSection(name);
    if (!section) throw new SvcError('user.settings_category_invalid', { loc, params: { category: name } });
    return section;
  }

  function fieldOrThrow(section: SettingsSection, key: string, loc: (string | number)[]): SettingsField {
    const field = findField(section, key);
    if (!field)
      throw new SvcError('user.settings_key_invalid', { loc, params: { category: section.name, key } });
    return field;
  }

  function checkValue(section: SettingsSection, field: SettingsField, value: unknown): void {
    if (!acceptsValue(field, value)) {
      // SPEC "Authentication routes" 5: loc [body, value].
      throw new SvcError('user.settings_value_invalid', {
        loc: ['body', 'value'],
        // The refusal says what the field takes: the allowed values or the range.
        params: { category: section.name, key: field.name, ...acceptedValues(field) },
      });
    }
  }

  /** Writes validated values into the stored document, keeping every other stored key untouched. */
  async function write(
    userId: string,
    changes: { section: SettingsSection; field: SettingsField; value: unknown }[],
  ) {
    const doc = await store.update(userId, (current) => {
      for (const { section, field, value } of changes) {
        const sectionKey = storedKey(current, section.name, section.snake);
        const container = isObject(current[sectionKey])
          ? (current[sectionKey] as Record<string, unknown>)
          : {};
        container[storedKey(container, field.name, field.snake)] = value;
        current[sectionKey] = container;
      }
      return current;
    });
    await invalidate(userId);
    return resolve(doc);
  }

  async function invalidate(userId: string): Promise<void> {
    try {
      await cache.delete(cacheKey(userId));
    } catch (error) {
      log.warn('could not drop cached user settings; they may be stale for up to 30 seconds', {
        exc: error,
        userId,
      });
    }
  }

  /** SPEC "Activity log recording rules" 5: cached 30 seconds; without cache, read from the database with a warning. */
  async function cachedValues(userId: string): Promise<SettingsValues> {
    let cacheUp = true;
    try {
      const hit = await cache.get<SettingsValues>(cacheKey(userId));
      if (hit) return hit;
    } catch (error) {
      cacheUp = false;
      log.warn('cache unavailable: reading user settings from the database', { exc: error, userId });
    }
    const values = resolve(await store.read(userId));
    if (cacheUp) {
      try {
        await cache.set(cacheKey(userId), values, SETTINGS_CACHE_TTL_SECONDS);
      } catch (error) {
        log.warn('cache unavailable: user settings not cached', { exc: error, userId });
      }
    }
    return values;
  }

  const reader: UserSettingsReader = {
    async get(userId, path) {
      const [sectionName, key, ...rest] = path.split('.');
      const section = sectionName && rest.length === 0 ? findSection(sectionName) : undefined;
      const field = section && key ? findField(section, key) : undefined;
      if (!section || !field) throw new Error(`unknown user setting '${path}' (use '<section>.<field>')`);
      return (await cachedValues(userId))[section.name]?.[field.name];
    },
  };

  return {
    sections,
    reader,

    async values(userId: string): Promise<SettingsValues> {
      return resolve(await store.read(userId));
    },

    /** `PUT /auth/user/settings/{category}/{key}`. */
    async put(userId: string, category: string, key: string, value: unknown): Promise<SettingsValues> {
      const section = sectionOrThrow(category, ['path', 'category']);
      const field = fieldOrThrow(section, key, ['path', 'key']);
      checkValue(section, field, value);
      return write(userId, [{ section, field, value }]);
    },

    /** `PATCH /auth/user/settings`: every value is checked before anything is saved (SPEC rule 5). */
    async patch(userId: string, body: Record<string, Record<string, unknown>>): Promise<SettingsValues> {
      const changes: { section: SettingsSection; field: SettingsField; value: unknown }[] = [];
      for (const [category, fields] of Object.entries(body)) {
        const section = sectionOrThrow(category, ['body', category]);
        for (const [key, value] of Object.entries(fields)) {
          const field = fieldOrThrow(section, key, ['body', category, key]);
          checkValue(section, field, value);
          changes.push({ section, field, value });
        }
      }
      if (changes.length === 0) return resolve(await store.read(userId));
      return write(userId, changes);
    },
  };
}

export type UserSettingsService = ReturnType<typeof createUserSettingsService>;
