// The signed-in user's `appearance` settings (SPEC "User settings", the built-in section of
// user-settings/builtin.ts: `theme` dark/light/auto and `density` comf/compact), read once at sign-in from
// `GET /auth/user/settings` and applied to the page as `data-theme` / `data-density` on <html> (console.css
// styles them); the Appearance page changes them with `PATCH /auth/user/settings` (docs/settings-ui-schema.md).
import { useState, type FormEvent } from 'react';
import { SvcApiError, type SvcClient } from '@svc/client';
import { call } from './api.js';
import { t, type TextKey } from './i18n.js';
import { ErrorMessage, Notice, useAction } from './ui.js';

export interface Appearance {
  theme: 'auto' | 'light' | 'dark';
  density: 'comf' | 'compact';
}

const THEMES: { value: Appearance['theme']; label: TextKey }[] = [
  { value: 'auto', label: 'themeAuto' },
  { value: 'light', label: 'themeLight' },
  { value: 'dark', label: 'themeDark' },
];
const DENSITIES: { value: Appearance['density']; label: TextKey }[] = [
  { value: 'comf', label: 'densityComf' },
  { value: 'compact', label: 'densityCompact' },
];

/** Sets the page's theme and density (null: back to the defaults, as after sign-out). */
export function applyAppearance(appearance: Appearance | null): void {
  const root = document.documentElement;
  root.dataset.theme = appearance?.theme ?? 'auto';
  root.dataset.density = appearance?.density ?? 'comf';
}

/**
 * The user's appearance, or null when the settings routes are not mounted (the router `settings` disabled:
 * the Appearance page is then hidden, SPEC-3 §6).
 */
export async function readAppearance(client: SvcClient): Promise<Appearance | null> {
  try {
    const values = await call<{ appearance?: Partial<Appearance> }>(client, 'GET', '/auth/user/settings');
    return { theme: values.appearance?.theme ?? 'auto', density: values.appearance?.density ?? 'comf' };
  } catch (error) {
    if (error instanceof SvcApiError && error.status === 404) return null;
    return { theme: 'auto', density: 'comf' };
  }
}

export function AppearancePage(props: { initial: Appearance; onSaved(appearance: Appearance): void }) {
  const { initial } = props;
  const [current, setCurrent] = useState(initial);
  const { run, error, notice, busy } = useAction();
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = {
      theme: String(form.get('theme')) as Appearance['theme'],
      density: String(form.get('density')) as Appearance['density'],
    };
    void run(async (client) => {
      const values = await call<{ appearance: Appearance }>(client, 'PATCH', '/auth/user/settings', {
        body: { appearance: next },
      });
      const saved = { theme: values.appearance.theme, density: values.appearance.density };
      setCurrent(saved);
      applyAppearance(saved);
      props.onSaved(saved);
      return t('saved');
    });
  };
  return (
    <>
      <h1>{t('appearance')}</h1>
      <form className="inline" onSubmit={onSubmit} aria-label={t('appearance')}>
        <label>
          {t('theme')}
          <select name="theme" defaultValue={current.theme}>
            {THEMES.map((theme) => (
              <option key={theme.value} value={theme.value}>
                {t(theme.label)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('density')}
          <select name="density" defaultValue={current.density}>
            {DENSITIES.map((density) => (
              <option key={density.value} value={density.value}>
                {t(density.label)}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('save')}
        </button>
      </form>
      <ErrorMessage message={error} />
      <Notice message={notice} />
    </>
  );
}
