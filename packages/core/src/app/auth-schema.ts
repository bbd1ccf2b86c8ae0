import type { Settings } from '../kernel/config/schema.js';
import { coreTables, type Dialect } from '../kernel/db/tables.js';
import type { SvcModule } from '../kernel/module.js';
import { coreModules } from './modules.js';

export { coreModules };

/**
 * The whole auth schema (every drizzle table of the core) built from the configured table names, for one
 * dialect. Migrations diff it; `auto_create_auth_schema` creates it.
 */
export function buildAuthSchema(
  settings: Settings,
  dialect: Dialect,
  modules: SvcModule[] = coreModules,
): Record<string, unknown> {
  const schema: Record<string, unknown> = { ...coreTables(settings, dialect) };
  for (const module of modules) {
    if (module.tables) Object.assign(schema, module.tables(settings, dialect));
  }
  return schema;
}
