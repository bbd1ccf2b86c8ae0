import type { Settings } from '../kernel/config/schema.js';
import { SvcError } from '../kernel/errors/svc-error.js';
import { translator, type Translate } from '../kernel/i18n/index.js';
import { PAGE_SCRIPT_TAG, type PageRequest, type PageResponse, type PageRoute } from '../kernel/page.js';
import { escapeHtml as e } from '../kernel/html.js';
import { TOKEN_MAX_LENGTH } from './constants.js';
import type { AccountService } from './service.js';

/** One page: its catalog prefix, the field it asks for (none: a confirm button), and its operation. */
interface PageKind {
  path: string;
  key: 'reset' | 'verify' | 'accept';
  field?: 'newPassword' | 'password';
  /** A checkbox sent as `name=true` when ticked, labelled by `pages.<key>.<label>` (SPEC-3 §7 rule 2). */
  checkbox?: { name: string; label: string };
  run(token: string, value: string, fields: Record<string, string | undefined>): Promise<unknown>;
}

/** What every page shows around its form: the application's name and, with `public_url`, the way back to it. */
interface PageFrame {
  appName: string;
  publicUrl: string;
}

function layout(t: Translate, lang: string, title: string, body: string, frame: PageFrame): string {
  // The name says which application the mail's link belongs to; the link leads back to it once done.
  const back = frame.publicUrl
    ? `<p><a href="${e(frame.publicUrl)}">${e(t('pages.back', { app: frame.appName }))}</a></p>`
    : '';
  return (
    `<!doctype html><html lang="${e(lang)}"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${e(title)}</title>` +
    `<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;line-height:1.5}` +
    `label{display:block;margin:1rem 0 .25rem}input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}` +
    `input[type=checkbox]{width:auto;margin-right:.5rem}` +
    `button{font:inherit;margin-top:1rem;padding:.5rem 1rem}[role=alert]{color:#a00}</style></head>` +
    `<body><header><p>${e(frame.appName)}</p></header><main><h1>${e(title)}</h1>${body}${back}</main></body></html>`
  );
}

function form(t: Translate, kind: PageKind, token: string, csrf: string | undefined, error?: string): string {
  const alert = error ? `<p role="alert">${e(error)}</p>` : '';
  const input = kind.field
    ? `<label for="secret">${e(t(`pages.${kind.key}.label`))}</label>` +
      `<input id="secret" name="secret" type="password" autocomplete="new-password" required>` +
      // A second entry of the new password catches a typo before it locks the user out; checked on submit.
      `<label for="confirm">${e(t('pages.confirm_label'))}</label>` +
      `<input id="confirm" name="confirm" type="password" autocomplete="new-password" required ` +
      `data-match="secret" data-mismatch="${e(t('auth.password_mismatch'))}">${PAGE_SCRIPT_TAG}`
    : '';
  const box = kind.checkbox
    ? `<label><input type="checkbox" name="${e(kind.checkbox.name)}" value="true">` +
      `${e(t(`pages.${kind.key}.${kind.checkbox.label}`))}</label>`
    : '';
  return (
    `${alert}<p>${e(t(`pages.${kind.key}.intro`))}</p>` +
    `<form method="post"><input type="hidden" name="token" value="${e(token)}">` +
    // SPEC-3 §5: with cookie sessions, the form carries the CSRF token (the page runs no script for a header).
    (csrf !== undefined ? `<input type="hidden" name="csrfToken" value="${e(csrf)}">` : '') +
    `${input}${box}` +
    `<button type="submit">${e(t(`pages.${kind.key}.submit`))}</button></form>`
  );
}

/**
 * The pages of SPEC-2 "Built-in account pages": they read `token` from the query, never consume it on GET
 * (mail scanners follow links), and complete the operation on the form's submit, without JavaScript.
 */
export function createAccountPages(service: AccountService, settings: Settings): PageRoute[] {
  const frame: PageFrame = { appName: settings.app_name, publicUrl: settings.public_url };
  const kinds: PageKind[] = [
    {
      path: '/account/reset-password',
      key: 'reset',
      field: 'newPassword',
      // SPEC-3 §7 rule 2: the reset form offers to delete the personal tokens too.
      checkbox: { name: 'revokeTokens', label: 'revoke_tokens' },
      run: (token, value, fields) =>
        service.reset(token, value, { revokeTokens: fields.revokeTokens === 'true' }),
    },
    { path: '/account/verify-email', key: 'verify', run: (token) => service.verifyEmail(token) },
    {
      path: '/account/accept-invitation',
      key: 'accept',
      field: 'password',
      run: (token, value) => service.acceptInvitation(token, value),
    },
  ];
  const page = (kind: PageKind): PageRoute => ({
    path: kind.path,
    get({ query, locale, csrfToken }: PageRequest): PageResponse {
      const t = translator(locale);
      const title = t(`pages.${kind.key}.title`);
      const token = (query.token ?? '').slice(0, TOKEN_MAX_LENGTH);
      if (!token)
        return {
          status: 400,
          html: layout(t, locale, title, `<p role="alert">${e(t('pages.no_token'))}</p>`, frame),
        };
      return { status: 200, html: layout(t, locale, title, form(t, kind, token, csrfToken), frame) };
    },
    async post({ form: fields, locale, csrfToken }: PageRequest): Promise<PageResponse> {
      const t = translator(locale);
      const title = t(`pages.${kind.key}.title`);
      const token = (fields.token ?? '').slice(0, TOKEN_MAX_LENGTH);
      try {
        if (!token)
          throw new SvcError(
            `auth.${kind.key === 'accept' ? 'invitation' : kind.key === 'verify' ? 'verify_token' : 'reset_token'}_invalid`,
          );
        // The two entries must match before anything is used up (the page works without JavaScript).
        if (kind.field && (fields.confirm ?? '') !== (fields.secret ?? '')) {
          throw new SvcError('auth.password_mismatch', { loc: ['body', 'confirm'] });
        }
        await kind.run(token, (fields.secret ?? '').slice(0, 1024), fields);
      } catch (error) {
        if (!(error instanceof SvcError)) throw error;
        const message = t(error.code, error.params);
        // A refused password keeps the token: the form comes back with the reason (SPEC-2 section 2).
        const again = kind.field && error.code.startsWith('auth.password');
        const body = again ? form(t, kind, token, csrfToken, message) : `<p role="alert">${e(message)}</p>`;
        return { status: error.status, html: layout(t, locale, title, body, frame) };
      }
      return {
        status: 200,
        html: layout(t, locale, title, `<p role="status">${e(t(`pages.${kind.key}.done`))}</p>`, frame),
      };
    },
  });
  return settings.account_pages_enabled ? kinds.map(page) : [];
}
