import { resolveLocale } from '../kernel/i18n/index.js';
import { defineModule, moduleOptions } from '../kernel/module.js';
import { createMailDelivery, type Mailer } from './service.js';
import type { MailKind, MailTemplate } from './templates.js';

/** The `createApp` options of the mail module (SPEC-2 "Mail and links"). */
export interface MailOptions {
  /**
   * Delivery of the password-reset, verification and invitation mails.
   * @default the built-in mailer: SMTP when `smtp_url` is set, else a logged warning
   */
  mailer?: Mailer;
  /** Templates of the built-in mailer by kind, replacing the shipped ones (en and de texts). @default {} */
  mailTemplates?: Partial<Record<MailKind, MailTemplate>>;
}

/**
 * Mail (SPEC-2 "Mail and links"): provides the `mail` port the account routes send their links through, and
 * the SMTP delivery of MFA email codes when `smtp_url` is set and no `mfaSender` is given.
 */
export const mailModule = defineModule({
  name: 'mail',
  options: moduleOptions<MailOptions>('mailer', 'mailTemplates'),
  provides: ['mail'],
  uses: ['userSettings'],
  setup({ settings, log, ports, options }) {
    const delivery = createMailDelivery({
      settings,
      log,
      mailer: options.mailer,
      templates: options.mailTemplates,
      async localeOf(userId) {
        const chosen = await ports
          .find('userSettings')
          ?.get(userId, 'preferences.locale')
          .catch(() => null);
        return resolveLocale(typeof chosen === 'string' && chosen ? chosen : settings.default_locale);
      },
    });
    ports.provide('mail', delivery);
    return { onShutdown: () => delivery.close() };
  },
});

export type { Mailer } from './service.js';
export {
  escapeHtml,
  type MailKind,
  type MailTemplate,
  type MailVariables,
  type RenderedMail,
} from './templates.js';
