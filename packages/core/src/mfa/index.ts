import type { SvcModule } from '../kernel/module.js';

/** Placeholder until the feature lands; see its issue. */
export const mfaModule = {
  name: 'mfa',
  setup() {
    return {};
  },
} satisfies SvcModule;
