import type { OrganizationInvitationMail } from '../packages/core/src/kernel/ports.js';
import type { Mailer } from '../packages/core/src/mail/service.js';

/**
 * A mailer adapter (SPEC-2 section 1, with SPEC-3 §2's fourth operation) for tests of organization invitations:
 * each invitation mail is pushed to `mails` as svc hands it over; the other mails are dropped.
 */
export function organizationMailer(mails: OrganizationInvitationMail[]): Mailer {
  return {
    sendPasswordReset: () => undefined,
    sendEmailVerification: () => undefined,
    sendInvitation: () => undefined,
    sendOrganizationInvitation: (mail) => void mails.push(mail),
  };
}
