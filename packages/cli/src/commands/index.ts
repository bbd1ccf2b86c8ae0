import type { CommandModule } from 'yargs';
import { auditCommand } from './audit.js';
import { devCommand } from './dev.js';
import { initCommand } from './init.js';
import { migrationsCommand } from './migrations.js';
import { serveCommand } from './serve.js';
import { usersCommand } from './users.js';

/**
 * Every `svc` command, one yargs module per file in this folder. A handler that sets `argv.exitCode`
 * makes the process exit with it.
 */
export const commands: CommandModule<any, any>[] = [
  serveCommand,
  devCommand,
  initCommand,
  migrationsCommand,
  usersCommand,
  auditCommand,
];
