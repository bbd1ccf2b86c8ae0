import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { escapeHtml as e } from '../kernel/html.js';
import { translator, type Translate } from '../kernel/i18n/index.js';
import { toAuthUser, usernameLookupKeys } from '../kernel/identity.js';
import type { PageRequest, PageResponse, PageRoute } from '../kernel/page.js';
import type { LoginGuard } from '../kernel/ports.js';
import type { OrganizationService } from './service.js';
import type { OrganizationStore } from './store.js';

const TOKEN_MAX_LENGTH = 200;
const PATH = '/account/join-organization';

function layout(t: Translate, lang: string, appName: string, body: string): string {
  const title = t('pages.join.title');
  return (
    `<!doctype html><html lang="${e(lang)}"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${e(title)}</title>` +
    `<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;line-height:1.5}` +
    `label{display:block;margin:1rem 0 .25rem}input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}` +
    `button{font:inherit;margin-top:1rem;padding:.5rem 1rem}[role=alert]{color:#a00}</style></head>` +
    `<body><header><p>${e(appName)}</p></header><main><h1>${e(title)}</h1>${body}</main></body></html>`
  );
}

/**
 * `GET /account/join-organization` (SPEC-3 §2, pages as SPEC-2 "Built-in account pages"): shows the
 * organization and role of the invitation without using it (mail scanners follow links), and accepts on submit
 * after the page's own username and password fields. A wrong password counts on the account's lockout counter
 * like a login.
 */
export function createJoinPage(deps: {
  settings: Settings;
  service: OrganizationService;
  store: OrganizationStore;
  loginGuard(): LoginGuard;
}): PageRoute {
  const { settings, service, store } = deps;
  const appName = settings.app_name;

  function joinForm(t: Translate, token: string, intro: string, error?: string): string {
    const alert = error ? `<p role="alert">${e(error)}</p>` : '';
    return (
      `${alert}<p>${e(intro)}</p><p>${e(t('pages.join.login'))}</p>` +
      `<form method="post"><input type="hidden" name="token" value="${e(token)}">` +
      `<label for="username">${e(t('pages.join.username'))}</label>` +
      `<input id="username" name="username" autocomplete="username" required>` +
      `<label for="password">${e(t('pages.accept.label'))}</label>` +
      `<input id="password" name="password" type="password" autocomplete="current-password" required>` +
      `<button type="submit">${e(t('pages.join.submit'))}</button></form>`
    );
  }

  async function intro(t: Translate, token: string): Promise<string> {
    const { organization, role } = await service.preview(token);
    return t('pages.join.intro', { organization: organization.name, role });
  }

  const failed = (t: Translate, locale: string, error: SvcError): PageResponse => ({
    status: error.status,
    html: layout(t, locale, appName, `<p role="alert">${e(t(error.code, error.params))}</p>`),
  });

  return {
    path: PATH,
    async get({ query, locale }: PageRequest): Promise<PageResponse> {
      const t = translator(locale);
      const token = (query.token ?? '').slice(0, TOKEN_MAX_LENGTH);
      if (!token)
        return {
          status: 400,
          html: layout(t, locale, appName, `<p role="alert">${e(t('pages.no_token'))}</p>`),
        };
      try {
        return { status: 200, html: layout(t, locale, appName, joinForm(t, token, await intro(t, token))) };
      } catch (error) {
        if (error instanceof SvcError) return failed(t, locale, error);
        throw error;
      }
    },
    async post({ form, locale }: PageRequest): Promise<PageResponse> {
      const t = translator(locale);
      const token = (form.token ?? '').slice(0, TOKEN_MAX_LENGTH);
      try {
        if (!token) throw new SvcError('organization.invitation_invalid');
        const text = await intro(t, token);
        const guard = deps.loginGuard();
        let row;
        for (const key of usernameLookupKeys((form.username ?? '').slice(0, 300))) {
          row = await store.userByName(key);
          if (row) break;
        }
        const password = (form.password ?? '').slice(0, 1024);
        if (row) await guard.assertNotLocked(row.id, 'auth.too_many_attempts');
        if (!row || !row.isActive || !(await guard.verifyPassword(row.id, password))) {
          const wrong = new SvcError('auth.invalid_credentials');
          return {
            status: 400,
            html: layout(t, locale, appName, joinForm(t, token, text, t(wrong.code))),
          };
        }
        const joined = await service.accept(toAuthUser(row), token);
        return {
          status: 200,
          html: layout(
            t,
            locale,
            appName,
            `<p role="status">${e(t('pages.join.done', { organization: joined.organization.name }))}</p>`,
          ),
        };
      } catch (error) {
        if (error instanceof SvcError) return failed(t, locale, error);
        throw error;
      }
    },
  };
}
