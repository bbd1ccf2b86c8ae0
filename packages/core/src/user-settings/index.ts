import type { CoreTables } from '../kernel/db/tables.js';
import type { ModuleContext, SvcModule } from '../kernel/module.js';
import { builtinSections } from './builtin.js';
import { toSection } from './define.js';
import { createSettingsRouter } from './routes.js';
import { createUserSettingsService } from './service.js';
import { createSettingsStore } from './store.js';

/** Per-user settings: built-in and project sections, their routes, UI schema and the `userSettings` port. */
export const userSettingsModule = {
  name: 'settings', // router name for disable_core_routers
  setup({ authDb, cache, log, ports, options, tables }: ModuleContext<{ settingsSections?: unknown[] }>) {
    const sections = [...builtinSections, ...(options.settingsSections ?? []).map(toSection)];
    const names = new Set<string>();
    for (const section of sections) {
      if (names.has(section.name)) throw new Error(`settings section '${section.name}' is defined twice`);
      names.add(section.name);
    }
    const store = createSettingsStore(authDb, tables.core as unknown as CoreTables);
    const service = createUserSettingsService({ sections, store, cache, log });
    ports.provide('userSettings', service.reader);
    return { routers: [createSettingsRouter(service)] };
  },
} satisfies SvcModule;
