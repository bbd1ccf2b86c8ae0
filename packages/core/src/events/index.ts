import type { SvcModule } from '../kernel/module.js';

/** Placeholder until the feature lands; see its issue. */
export const eventsModule = {
  name: 'events',
  setup() {
    return {};
  },
} satisfies SvcModule;
