import { de } from './locales/de.js';
import { en } from './locales/en.js';

/** Message catalogs by language. Projects add keys with {@link addTranslations} (never by writing here). */
export const catalogs: Record<string, Record<string, string>> = { en: { ...en }, de: { ...de } };

export type Translate = (key: string, params?: Record<string, unknown>, fallback?: string) => string;

/**
 * Every key some catalog holds, for {@link hasTranslation}: a list of 1,000 groups asks it for each group and
 * each of their permissions, and looking the key up in every catalog took a sixth of that request
 * (docs/performance.md "The console's lists at a million users").
 */
const knownKeys = new Set(Object.values(catalogs).flatMap((catalog) => Object.keys(catalog)));

/** Adds or overrides messages of one language (project translation keys, settings texts). */
export function addTranslations(lang: string, messages: Record<string, string>): void {
  catalogs[lang] = { ...(catalogs[lang] ?? {}), ...messages };
  for (const key of Object.keys(messages)) knownKeys.add(key);
}

/** `de-CH` → `de`; unknown languages fall back to `en`. */
export function resolveLocale(tag: string | undefined): string {
  if (!tag) return 'en';
  const lower = tag.toLowerCase().replace('_', '-');
  if (catalogs[lower]) return lower;
  const base = lower.split('-')[0]!;
  return catalogs[base] ? base : 'en';
}

/** Picks the best supported language of an `Accept-Language` header, by q-value. */
export function negotiateLocale(header: string | undefined, fallback: string): string {
  if (!header) return resolveLocale(fallback);
  const ranked = header
    .split(',')
    .map((part) => {
      const [tag, ...rest] = part.trim().split(';');
      const q = rest.find((p) => p.trim().startsWith('q='));
      return { tag: tag!.trim(), q: q ? Number(q.trim().slice(2)) || 0 : 1 };
    })
    .filter((x) => x.tag && x.tag !== '*' && x.q > 0)
    .sort((a, b) => b.q - a.q);
  for (const { tag } of ranked) {
    const lower = tag.toLowerCase();
    if (catalogs[lower]) return lower;
    const base = lower.split('-')[0]!;
    if (catalogs[base]) return base;
  }
  return resolveLocale(fallback);
}

function interpolate(text: string, params?: Record<string, unknown>): string {
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    return Array.isArray(value) ? value.join(', ') : String(value);
  });
}

const translators = new Map<string, Translate>();

/** A translator for one language: the language's text, else English, else `fallback`, else the key. */
export function translator(locale: string): Translate {
  const lang = resolveLocale(locale);
  // One function per language, not one per call (every request asks for one; docs/performance.md). The keys
  // are resolved languages only, so the map stays as small as the catalogs.
  let t = translators.get(lang);
  if (!t) {
    t = (key, params, fallback) => {
      const text = catalogs[lang]?.[key] ?? catalogs.en?.[key] ?? fallback ?? key;
      return interpolate(text, params);
    };
    translators.set(lang, t);
  }
  return t;
}

/** Whether a key has a message in some catalog (settings `labelKey` etc.). */
export function hasTranslation(key: string): boolean {
  return knownKeys.has(key);
}
