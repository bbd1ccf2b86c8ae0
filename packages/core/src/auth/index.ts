import type { SvcModule } from '../kernel/module.js';

/** Placeholder until the feature lands; see its issue. */
export const authModule = {
  name: 'auth',
  setup() {
    return {};
  },
} satisfies SvcModule;
