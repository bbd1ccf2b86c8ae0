import { escapeHtml } from '../kernel/html.js';
import { translator, type Translate } from '../kernel/i18n/index.js';

/** The mails svc writes (SPEC-2 "Mail and links"; the MFA code of SPEC "Multi-factor routes" 6). */
export type MailKind =
  | 'passwordReset'
  | 'emailVerification'
  | 'invitation'
  | 'mfaCode'
  // SPEC-3 §2: the invitation into an organization.
  | 'organizationInvitation';

/** What a template may put in a mail. */
export interface MailVariables {
  /** `app_name` (or `project_name`). */
  appName: string;
  email: string;
  /** The link with its token (link mails). */
  url?: string;
  /** When the link or code stops working. */
  expiresAt?: Date;
  /** Minutes the code or link is valid, rounded up. */
  expiresInMinutes?: number;
  /** The same in the words of the mail's language: `3 days`, `1 hour and 30 minutes`, `3 Tage`. */
  expiresIn?: string;
  /** The inviting username (invitation). */
  invitedBy?: string;
  /** The six-digit code (MFA code). */
  code?: string;
  /** The organization's name (organization invitation). */
  organization?: string;
  /** The role offered (organization invitation). */
  role?: string;
}

/** One written mail: a subject, a plain-text body and an HTML body. */
export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/**
 * A template: writes one kind of mail in the language of `t`. Override one with
 * `createApp({ mailTemplates: { passwordReset: (vars, t) => ({ subject, text, html }) } })`, or only its
 * texts with `addTranslations(lang, { 'mail.password_reset.subject': … })`.
 */
export type MailTemplate = (vars: MailVariables, t: Translate) => RenderedMail;

export { escapeHtml };

/** The catalog prefix of a kind (`mail.password_reset.…`). */
const KEYS: Record<MailKind, string> = {
  passwordReset: 'mail.password_reset',
  emailVerification: 'mail.email_verification',
  invitation: 'mail.invitation',
  mfaCode: 'mail.mfa_code',
  organizationInvitation: 'mail.organization_invitation',
};

/**
 * The built-in layout: a greeting-free paragraph, the action (a link, or the code), and the expiry note.
 * The texts come from the catalogs, so a project can reword or translate them without a template.
 */
function standard(kind: MailKind): MailTemplate {
  const key = KEYS[kind];
  return (vars, t) => {
    const params = {
      app: vars.appName,
      email: vars.email,
      invitedBy: vars.invitedBy ?? '',
      minutes: vars.expiresInMinutes ?? '',
      duration: vars.expiresIn ?? '',
      code: vars.code ?? '',
      organization: vars.organization ?? '',
      role: vars.role ?? '',
    };
    const subject = t(`${key}.subject`, params);
    const intro = t(`${key}.intro`, params);
    const action = t(`${key}.action`, params);
    const expiry = t(`${key}.expiry`, params);
    const ignore = t(`${key}.ignore`, params);
    const lines = vars.url
      ? [intro, '', `${action}:`, vars.url, '', expiry, '', ignore]
      : [intro, '', `${action}: ${vars.code ?? ''}`, '', expiry, '', ignore];
    const link = vars.url
      ? `<p><a href="${escapeHtml(vars.url)}">${escapeHtml(action)}</a></p>` +
        `<p style="font-size:90%;color:#555">${escapeHtml(vars.url)}</p>`
      : `<p>${escapeHtml(action)}:</p><p style="font-size:150%;letter-spacing:0.2em"><strong>${escapeHtml(vars.code ?? '')}</strong></p>`;
    const html =
      `<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">` +
      `<p>${escapeHtml(intro)}</p>${link}<p>${escapeHtml(expiry)}</p>` +
      `<p style="color:#555">${escapeHtml(ignore)}</p></body></html>`;
    return { subject, text: `${lines.join('\n')}\n`, html };
  };
}

export const defaultTemplates: Record<MailKind, MailTemplate> = {
  passwordReset: standard('passwordReset'),
  emailVerification: standard('emailVerification'),
  invitation: standard('invitation'),
  mfaCode: standard('mfaCode'),
  organizationInvitation: standard('organizationInvitation'),
};

const MINUTES_PER = { day: 24 * 60, hour: 60, minute: 1 } as const;

/**
 * A number of minutes as a person says it, in `locale`: the largest units that add up to it exactly
 * (`4320` → `3 days`, `90` → `1 hour and 30 minutes`; `de`: `3 Tage`, `1 Stunde und 30 Minuten`), from the
 * runtime's own unit names (Intl), so every language the runtime knows gets its words.
 * @example durationInWords(4320, 'en') // '3 days'
 */
export function durationInWords(minutes: number, locale: string): string {
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(minutes));
  for (const [unit, size] of Object.entries(MINUTES_PER)) {
    const count = Math.floor(rest / size);
    if (count === 0 && !(unit === 'minute' && parts.length === 0)) continue;
    rest -= count * size;
    parts.push(new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'long' }).format(count));
  }
  return new Intl.ListFormat(locale, { type: 'conjunction' }).format(parts);
}

/** Writes a mail of `kind` in `locale` with the project's template when it gave one. */
export function renderMail(
  kind: MailKind,
  vars: MailVariables,
  locale: string,
  templates: Partial<Record<MailKind, MailTemplate>> = {},
): RenderedMail {
  const template = templates[kind] ?? defaultTemplates[kind];
  const expiresIn =
    vars.expiresInMinutes === undefined ? undefined : durationInWords(vars.expiresInMinutes, locale);
  return template({ expiresIn, ...vars }, translator(locale));
}
