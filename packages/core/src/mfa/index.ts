import { issueTokensWith } from '../kernel/browser-session.js';
import { defineModule, moduleOptions } from '../kernel/module.js';
import { createMfaAdminRouter, createMfaRouter } from './routes.js';
import { createLoggingSender, type MfaSender } from './sender.js';
import { createMfaService } from './service.js';
import { createMfaStore } from './store.js';
import { mfaTables } from './tables.js';

/** The `createApp` options of the MFA module. */
export interface MfaOptions {
  /**
   * Delivery of email and SMS codes.
   * @default email codes over SMTP when `smtp_url` is set; otherwise, and for SMS, a logged warning
   */
  mfaSender?: MfaSender;
}

/**
 * Multi-factor authentication: TOTP, email and SMS codes, backup codes, the login challenge
 * (SPEC "Multi-factor routes"). Provides the `secondFactor` port; uses `loginGuard` and `rateLimiter`.
 */
export const mfaModule = defineModule({
  name: 'mfa', // router name for disable_core_routers
  tables: mfaTables,
  options: moduleOptions<MfaOptions>('mfaSender'),
  provides: ['secondFactor'],
  requires: ['loginGuard', 'tokens'],
  uses: ['rateLimiter', 'mail', 'passkeys', 'browserSessions'],
  setup({ settings, authDb, cache, log, ports, options, tables, coreTables }) {
    const store = createMfaStore(authDb, tables, coreTables);
    const logging = createLoggingSender(log);
    // SPEC-2 "Mail and links": with smtp_url set and no mfaSender, email codes go out over SMTP.
    const sender: MfaSender = options.mfaSender ?? {
      sendEmailCode(message) {
        const mail = ports.find('mail');
        return mail?.smtp ? mail.mfaCode(message) : logging.sendEmailCode(message);
      },
      sendSmsCode: (message) => logging.sendSmsCode(message),
    };
    const service = createMfaService({ settings, cache, store, sender, log, ports });
    ports.provide('secondFactor', service); // auth asks for it during login
    return {
      routers: [createMfaRouter(service, issueTokensWith(ports)), createMfaAdminRouter(service)],
      // SPEC-2 "Administration and self-service": the export's `mfa`, {enabled, method} and no secret.
      accountExport: { mfa: (userId) => service.statusOf(userId) },
    };
  },
});
