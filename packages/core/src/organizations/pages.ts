import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { escapeHtml as e } from '../kernel/html.js';
import { translator, type Translate } from '../kernel/i18n/index.js';
import { toAuthUser, usernameLookupKeys, type AuthUser } from '../kernel/identity.js';
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
 * for the browser's cookie session (SPEC-3 §5) when there is one, else after the page's own username and
 * password fields. A wrong password counts on the account's lockout counter like a login. With cookie sessions
 * the forms carry the CSRF token (the hidden field `csrfToken`), which kernel/http checks before a submit.
 */
export function createJoinPage(deps: {
  settings: Settings;
  service: OrganizationService;
  store: OrganizationStore;
  loginGuard(): LoginGuard;
}): PageRoute {
  const { settings, service, store } = deps;
  const appName = settings.app_name;

  const hidden = (token: string, csrf: string | undefined) =>
    `<input type="hidden" name="token" value="${e(token)}">` +
    (csrf !== undefined ? `<input type="hidden" name="csrfToken" value="${e(csrf)}">` : '');

  /** The page's own fields: a username and a password. */
  function loginForm(t: Translate, token: string, csrf: string | undefined): string {
    return (
      `<p>${e(t('pages.join.login'))}</p>` +
      `<form method="post">${hidden(token, csrf)}` +
      `<label for="username">${e(t('pages.join.username'))}</label>` +
      `<input id="username" name="username" autocomplete="username" required>` +
      `<label for="password">${e(t('pages.accept.label'))}</label>` +
      `<input id="password" name="password" type="password" autocomplete="current-password" required>` +
      `<button type="submit">${e(t('pages.join.submit'))}</button></form>`
    );
  }

  /** For the signed-in browser: one button; the page's own fields stay for another account. */
  function sessionForm(t: Translate, token: string, csrf: string | undefined, user: AuthUser): string {
    return (
      `<p>${e(t('pages.join.signed_in', { username: user.username }))}</p>` +
      `<form method="post">${hidden(token, csrf)}` +
      `<button type="submit">${e(t('pages.join.submit'))}</button></form>` +
      `<h2>${e(t('pages.join.other_account'))}</h2>${loginForm(t, token, csrf)}`
    );
  }

  function joinForms(
    t: Translate,
    token: string,
    intro: string,
    request: PageRequest,
    user: AuthUser | null,
    error?: string,
  ): string {
    const alert = error ? `<p role="alert">${e(error)}</p>` : '';
    const forms = user
      ? sessionForm(t, token, request.csrfToken, user)
      : loginForm(t, token, request.csrfToken);
    return `${alert}<p>${e(intro)}</p>${forms}`;
  }

  async function intro(t: Translate, token: string): Promise<string> {
    const { organization, role } = await service.preview(token);
    return t('pages.join.intro', { organization: organization.name, role });
  }

  const failed = (t: Translate, locale: string, error: SvcError): PageResponse => ({
    status: error.status,
    html: layout(t, locale, appName, `<p role="alert">${e(t(error.code, error.params))}</p>`),
  });

  const joined = (t: Translate, locale: string, organization: string): PageResponse => ({
    status: 200,
    html: layout(t, locale, appName, `<p role="status">${e(t('pages.join.done', { organization }))}</p>`),
  });

  /** The user of the page's own fields, or null when they do not prove an active account. */
  async function userOfFields(form: Record<string, string>): Promise<AuthUser | null> {
    const guard = deps.loginGuard();
    let row;
    for (const key of usernameLookupKeys((form.username ?? '').slice(0, 300))) {
      row = await store.userByName(key);
      if (row) break;
    }
    const password = (form.password ?? '').slice(0, 1024);
    if (row) await guard.assertNotLocked(row.id, 'auth.too_many_attempts');
    if (!row || !row.isActive || !(await guard.verifyPassword(row.id, password))) return null;
    return toAuthUser(row);
  }

  return {
    path: PATH,
    async get(request: PageRequest): Promise<PageResponse> {
      const { query, locale } = request;
      const t = translator(locale);
      const token = (query.token ?? '').slice(0, TOKEN_MAX_LENGTH);
      if (!token)
        return {
          status: 400,
          html: layout(t, locale, appName, `<p role="alert">${e(t('pages.no_token'))}</p>`),
        };
      try {
        const text = await intro(t, token);
        const user = (await request.sessionUser?.()) ?? null;
        return { status: 200, html: layout(t, locale, appName, joinForms(t, token, text, request, user)) };
      } catch (error) {
        if (error instanceof SvcError) return failed(t, locale, error);
        throw error;
      }
    },
    async post(request: PageRequest): Promise<PageResponse> {
      const { form, locale } = request;
      const t = translator(locale);
      const token = (form.token ?? '').slice(0, TOKEN_MAX_LENGTH);
      try {
        if (!token) throw new SvcError('organization.invitation_invalid');
        const text = await intro(t, token);
        const session = (await request.sessionUser?.()) ?? null;
        // The page's own fields win when they are filled in (another account than the signed-in one).
        const byFields = (form.username ?? '') !== '' || (form.password ?? '') !== '';
        const user = byFields || !session ? await userOfFields(form) : session;
        if (!user) {
          const wrong = t(byFields ? 'auth.invalid_credentials' : 'pages.join.login');
          return {
            status: 400,
            html: layout(t, locale, appName, joinForms(t, token, text, request, session, wrong)),
          };
        }
        try {
          return joined(t, locale, (await service.accept(user, token)).organization.name);
        } catch (error) {
          // Signed in with another address than the invited one: say so and offer the page's own fields.
          if (!(error instanceof SvcError) || error.code !== 'organization.invitation_email_mismatch')
            throw error;
          return {
            status: error.status,
            html: layout(t, locale, appName, joinForms(t, token, text, request, session, t(error.code))),
          };
        }
      } catch (error) {
        if (error instanceof SvcError) return failed(t, locale, error);
        throw error;
      }
    },
  };
}
