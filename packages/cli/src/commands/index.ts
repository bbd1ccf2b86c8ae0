import type { CommandModule } from 'yargs';
import { auditCommand } from './audit.js';
import { usersCommand } from './users.js';
import { devCommand } from './dev.js';
import { serveCommand } from './serve.js';

/**
 * Every `svc` command, one yargs module per file in this folder. A handler that sets `argv.exitCode`
 * makes the process exit with it.
 */
export const commands: CommandModule<any, any>[] = [serveCommand, devCommand, usersCommand, auditCommand];
