import type { SvcModule } from '../kernel/module.js';

/** Placeholder until the feature lands; see its issue. */
export const healthModule = {
  name: 'health',
  setup() {
    return {};
  },
} satisfies SvcModule;
