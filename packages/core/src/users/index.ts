import type { SvcModule } from '../kernel/module.js';

/** Placeholder until the feature lands; see its issue. */
export const usersModule = {
  name: 'users',
  setup() {
    return {};
  },
} satisfies SvcModule;
