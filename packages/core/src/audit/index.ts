import type { SvcModule } from '../kernel/module.js';

/** Placeholder until the feature lands; see its issue. */
export const auditModule = {
  name: 'audit',
  setup() {
    return {};
  },
} satisfies SvcModule;
