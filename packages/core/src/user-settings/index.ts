import { defineModule, moduleOptions } from '../kernel/module.js';
import { builtinSections } from './builtin.js';
import { toSection, type SettingsSection } from './define.js';
import { createSettingsRouter } from './routes.js';
import { createUserSettingsService } from './service.js';
import { createSettingsStore } from './store.js';

/** The `createApp` options of the user-settings module. */
export interface UserSettingsOptions {
  /** Per-user settings sections of the project (see `defineSettingsSection`). @default [] */
  settingsSections?: SettingsSection[];
}

/** Per-user settings: built-in and project sections, their routes, UI schema and the `userSettings` port. */
export const userSettingsModule = defineModule({
  name: 'settings', // router name for disable_core_routers
  options: moduleOptions<UserSettingsOptions>('settingsSections'),
  provides: ['userSettings'],
  setup({ authDb, cache, log, ports, options, coreTables }) {
    const sections = [...builtinSections, ...(options.settingsSections ?? []).map(toSection)];
    const names = new Set<string>();
    for (const section of sections) {
      if (names.has(section.name)) throw new Error(`settings section '${section.name}' is defined twice`);
      names.add(section.name);
    }
    const store = createSettingsStore(authDb, coreTables);
    const service = createUserSettingsService({ sections, store, cache, log });
    ports.provide('userSettings', service.reader);
    return {
      routers: [createSettingsRouter(service)],
      // SPEC-2 "Administration and self-service": the export's `settings`, the values as the settings routes show them.
      accountExport: { settings: (userId) => service.values(userId) },
    };
  },
});
