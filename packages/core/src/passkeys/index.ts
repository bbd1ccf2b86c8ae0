import { issueTokensWith } from '../kernel/browser-session.js';
import { defineModule } from '../kernel/module.js';
import { createAssertionCheck } from './assertion.js';
import { createChallenges } from './challenges.js';
import { createPasskeyLogin } from './login.js';
import { createRegistration, toPasskeyOut } from './registration.js';
import { relyingParty } from './relying-party.js';
import { createPasskeyAdminRouter, createPasskeyLoginRouter, createPasskeysRouter } from './routes.js';
import { createPasskeyStore } from './store.js';
import { passkeyTables } from './tables.js';

/**
 * Passkeys (WebAuthn; SPEC-2 "Passkeys", docs/passkeys.md): registration and management, passwordless login,
 * and the passkey as the MFA step through the `passkeys` port `POST /mfa/verify` reads. Mounted with
 * `passkeys_enabled`; its table exists either way (one schema whatever the settings).
 */
export const passkeysModule = defineModule({
  name: 'passkeys',
  tables: passkeyTables,
  provides: ['passkeys'],
  requires: ['loginGuard', 'tokens'],
  uses: ['rateLimiter', 'browserSessions'],
  setup({ settings, authDb, cache, log, ports, tables, coreTables }) {
    const store = createPasskeyStore(authDb, tables, coreTables);
    // SPEC-2 "Passkeys": the account export lists the passkeys without keys, enabled or not.
    const accountExport = {
      passkeys: async (userId: string) => (await store.list(userId)).map(toPasskeyOut),
    };
    if (!settings.passkeys_enabled) return { accountExport };
    const now = () => new Date();
    const rp = relyingParty(settings);
    const challenges = createChallenges(cache);
    const verifyAssertion = createAssertionCheck({ rp, store, log, now });
    const registration = createRegistration({
      maxPerUser: settings.passkeys_max_per_user,
      rp,
      store,
      challenges,
      now,
    });
    const login = createPasskeyLogin({ settings, rp, store, challenges, verifyAssertion, ports });
    ports.provide('passkeys', login.factor);
    return {
      routers: [
        createPasskeysRouter(registration),
        createPasskeyAdminRouter(registration),
        createPasskeyLoginRouter(login, issueTokensWith(ports)),
      ],
      accountExport,
    };
  },
});
