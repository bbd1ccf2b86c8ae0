import type { SvcModule } from '../kernel/module.js';

/** Placeholder until the feature lands; see its issue. */
export const rbacModule = {
  name: 'permissions',
  setup() {
    return {};
  },
} satisfies SvcModule;
