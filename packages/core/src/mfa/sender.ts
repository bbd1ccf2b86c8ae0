import type { Logger } from '../kernel/log/logger.js';

/** An email code to deliver (SPEC "Multi-factor routes" 6). */
export interface EmailCodeMessage {
  userId: string;
  email: string;
  otpCode: string;
  expiresInMinutes: number;
}

/** An SMS code to deliver (SPEC "Multi-factor routes" 6). */
export interface SmsCodeMessage {
  userId: string;
  phoneNumber: string;
  otpCode: string;
  expiresInMinutes: number;
}

/**
 * Delivery of MFA codes, given to `createApp({ mfaSender })`. Called in the background after the code is
 * stored; a rejection is only logged.
 * @example
 * createApp({ mfaSender: { async sendEmailCode(m) { await mailer.send(m.email, m.otpCode); },
 *                          async sendSmsCode(m) { await sms.send(m.phoneNumber, m.otpCode); } } });
 */
export interface MfaSender {
  sendEmailCode(message: EmailCodeMessage): Promise<void> | void;
  sendSmsCode(message: SmsCodeMessage): Promise<void> | void;
}

/** SPEC "Multi-factor routes" 6: the default adapter only logs a warning (never the code). */
export function createLoggingSender(log: Logger): MfaSender {
  return {
    sendEmailCode({ userId }) {
      log.warn('no mfaSender is configured: an MFA email code was not delivered', { user_id: userId });
    },
    sendSmsCode({ userId }) {
      log.warn('no mfaSender is configured: an MFA SMS code was not delivered', { user_id: userId });
    },
  };
}
