import type { SvcModule } from '../kernel/module.js';

/** Placeholder until the feature lands; see its issue. */
export const userSettingsModule = {
  name: 'settings',
  setup() {
    return {};
  },
} satisfies SvcModule;
