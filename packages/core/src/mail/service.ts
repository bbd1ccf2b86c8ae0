import { createRequire } from 'node:module';
import type * as Nodemailer from 'nodemailer';
import type { Settings } from '../kernel/config/schema.js';
import type { Logger } from '../kernel/log/logger.js';
import type {
  AccountMail,
  InvitationMail,
  MailDelivery,
  MfaCodeMail,
  OrganizationInvitationMail,
} from '../kernel/ports.js';
import { renderMail, type MailKind, type MailTemplate } from './templates.js';

/**
 * A project's own delivery of the link mails, given to `createApp({ mailer })` (SPEC-2 "Mail and links").
 * Called in the background after the response; a rejection is only logged.
 * @example
 * createApp({ mailer: { sendPasswordReset: (m) => myMail.send(m.email, m.url), ... } });
 */
export interface Mailer {
  sendPasswordReset(mail: AccountMail): Promise<void> | void;
  sendEmailVerification(mail: AccountMail): Promise<void> | void;
  sendInvitation(mail: InvitationMail): Promise<void> | void;
  /**
   * SPEC-3 §2: an invitation into an organization. Optional for mailers written before it: without it the
   * built-in mailer writes this one.
   */
  sendOrganizationInvitation?(mail: OrganizationInvitationMail): Promise<void> | void;
}

export interface MailDeliveryDeps {
  settings: Settings;
  log: Logger;
  mailer?: Mailer;
  templates?: Partial<Record<MailKind, MailTemplate>>;
  /** The language of a user's mails: `preferences.locale` when set, else `default_locale`. */
  localeOf(userId: string): Promise<string>;
}

const requireCommonJs = createRequire(import.meta.url);

/** Longest a graceful stop waits for mails still being handed to the SMTP server. */
const SHUTDOWN_WAIT_MS = 10_000;

/**
 * The `mail` port: the project's mailer when given, else the built-in one (SMTP through nodemailer when
 * `smtp_url` is set; otherwise a warning, with the link only under `debug`). Every send runs after the
 * current response (setImmediate) and its failure is logged without the link or the code.
 */
export function createMailDelivery(deps: MailDeliveryDeps): MailDelivery & { close(): Promise<void> } {
  const { settings, log, mailer, templates } = deps;
  // nodemailer (a CommonJS package) is required only when `smtp_url` is set: every `svc` command imports this
  // file, and most projects deliver no mail through it (docs/performance.md "The CLI's start").
  const transport: Nodemailer.Transporter | null = settings.smtp_url
    ? (requireCommonJs('nodemailer') as typeof Nodemailer).createTransport(settings.smtp_url)
    : null;
  const inFlight = new Set<Promise<void>>();
  const appName = settings.project_name || settings.app_name;

  function background(kind: MailKind, userId: string, send: () => Promise<void> | void): void {
    const run = new Promise<void>((resolve) => setImmediate(resolve))
      .then(send)
      .catch((error: unknown) => {
        // The error text of an SMTP client names the server's answer, never the message body.
        log.error('mail delivery failed', {
          kind,
          user_id: userId,
          error: String((error as Error)?.message ?? error),
        });
      })
      .finally(() => inFlight.delete(run));
    inFlight.add(run);
  }

  async function smtpSend(
    kind: MailKind,
    to: string,
    vars: Parameters<typeof renderMail>[1],
    locale: string,
  ) {
    const mail = renderMail(kind, vars, locale, templates);
    await transport!.sendMail({ from: settings.mail_from, to, ...mail });
  }

  function builtIn(kind: MailKind, mail: AccountMail, extra: { invitedBy?: string } = {}): void {
    if (!transport) {
      // SPEC-2 "Mail and links": not delivered without smtp_url; the link is logged only for a developer.
      log.warn('smtp_url is not set: a mail was not delivered', {
        kind,
        user_id: mail.userId,
        ...(settings.debug ? { url: mail.url } : {}),
      });
      return;
    }
    const vars = {
      appName,
      email: mail.email,
      url: mail.url,
      expiresAt: mail.expiresAt,
      expiresInMinutes: Math.max(1, Math.ceil((mail.expiresAt.getTime() - Date.now()) / 60_000)),
      ...extra,
    };
    background(kind, mail.userId, () => smtpSend(kind, mail.email, vars, mail.locale));
  }

  return {
    smtp: transport !== null,
    passwordReset(mail) {
      if (mailer) background('passwordReset', mail.userId, () => mailer.sendPasswordReset(mail));
      else builtIn('passwordReset', mail);
    },
    emailVerification(mail) {
      if (mailer) background('emailVerification', mail.userId, () => mailer.sendEmailVerification(mail));
      else builtIn('emailVerification', mail);
    },
    invitation(mail) {
      if (mailer) background('invitation', mail.userId, () => mailer.sendInvitation(mail));
      else builtIn('invitation', mail, { invitedBy: mail.invitedBy });
    },
    organizationInvitation(mail) {
      // No user id: the invitee may have no account; the organization id names the mail in the log.
      const logId = `organization:${mail.organization.id}`;
      if (mailer?.sendOrganizationInvitation) {
        const send = mailer.sendOrganizationInvitation.bind(mailer);
        background('organizationInvitation', logId, () => send(mail));
        return;
      }
      if (!transport) {
        log.warn('smtp_url is not set: a mail was not delivered', {
          kind: 'organizationInvitation',
          organization_id: mail.organization.id,
          ...(settings.debug ? { url: mail.url } : {}),
        });
        return;
      }
      const vars = {
        appName,
        email: mail.email,
        url: mail.url,
        expiresAt: mail.expiresAt,
        expiresInMinutes: Math.max(1, Math.ceil((mail.expiresAt.getTime() - Date.now()) / 60_000)),
        invitedBy: mail.invitedBy,
        organization: mail.organization.name,
        role: mail.role,
      };
      background('organizationInvitation', logId, () =>
        smtpSend('organizationInvitation', mail.email, vars, mail.locale),
      );
    },
    async mfaCode(mail: MfaCodeMail) {
      if (!transport) throw new Error('smtp_url is not set');
      const locale = await deps.localeOf(mail.userId);
      await smtpSend(
        'mfaCode',
        mail.email,
        { appName, email: mail.email, code: mail.otpCode, expiresInMinutes: mail.expiresInMinutes },
        locale,
      );
    },
    async close() {
      const waiting = Promise.all([...inFlight]);
      const timer = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_WAIT_MS).unref());
      await Promise.race([waiting, timer]);
      transport?.close();
    },
  };
}
