import { accountsModule } from '../accounts/index.js';
import { adminFeaturesModule } from '../admin-features/index.js';
import { auditModule } from '../audit/index.js';
import { authModule } from '../auth/index.js';
import { eventsModule } from '../events/index.js';
import { healthModule } from '../health/index.js';
import { mailModule } from '../mail/index.js';
import type { SvcModule } from '../kernel/module.js';
import { mfaModule } from '../mfa/index.js';
import { organizationsModule } from '../organizations/index.js';
import { passkeysModule } from '../passkeys/index.js';
import { personalTokensModule } from '../personal-tokens/index.js';
import { rbacModule } from '../rbac/index.js';
// SPEC-3 section 1: social login
import { socialLoginModule } from '../social-login/index.js';
import { userSettingsModule } from '../user-settings/index.js';
import { usersModule } from '../users/index.js';
import { webhooksModule } from '../webhooks/index.js'; // SPEC-3 §3

/**
 * The core modules in setup order: a module may read ports provided by those before it
 * (and by later ones at request time). Router names are those of `disable_core_routers`.
 */
export const coreModules: SvcModule[] = [
  healthModule,
  authModule,
  rbacModule,
  usersModule,
  userSettingsModule,
  mailModule,
  accountsModule,
  mfaModule,
  passkeysModule,
  personalTokensModule,
  socialLoginModule, // SPEC-3 section 1: social login
  auditModule,
  eventsModule,
  // SPEC-3 §2 organizations
  organizationsModule,
  webhooksModule, // SPEC-3 §3: provides the `webhooks` outbox port
  adminFeaturesModule, // reads the route table every module above contributes to
];
