import * as internal from '@svc/core/internal';
import type { Argv, CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { firstLine } from '../load-app.js';
import { loadProjectSettings, openAuthDatabase, resolveBaseDir } from '../project.js';

interface GlobalArgs {
  baseDir?: string;
  exitCode?: number;
}

/** Options of `svc audit purge` (SPEC "Command-line interface"). */
export interface AuditPurgeArgs extends GlobalArgs {
  days?: number;
  dryRun?: boolean;
}

/**
 * The days to keep: `--days`, else `activity_log_retention_days`; 0 there (the default) means the operator
 * must say it (SPEC "Configuration": 0 requires `--days`).
 */
export function purgeDays(option: number | undefined, retentionDays: number): number {
  if (option !== undefined) {
    if (!Number.isInteger(option) || option < 0)
      throw new CliError('--days must be a whole number of days, 0 or more', 2);
    return option;
  }
  if (retentionDays > 0) return retentionDays;
  throw new CliError(
    'activity_log_retention_days is 0 (keep everything): pass --days N to delete entries older than N days',
    2,
  );
}

async function purge(argv: AuditPurgeArgs): Promise<void> {
  const baseDir = resolveBaseDir(argv.baseDir);
  // Purging needs no signing key: only the database settings matter.
  const settings = loadProjectSettings({ baseDir, requireSecretKey: false });
  const days = purgeDays(argv.days, settings.activity_log_retention_days);
  const { db } = openAuthDatabase(settings, baseDir);
  const table = internal.tableName(settings, 'activity_log');
  try {
    const result = await internal.purgeActivityLog(db, settings, {
      days,
      dryRun: argv.dryRun ?? false,
      onProgress: (deleted, matched) => process.stdout.write(`deleted ${deleted} of ${matched} entries\n`),
    });
    const before = result.cutoff.toISOString();
    process.stdout.write(
      argv.dryRun
        ? `dry run: ${result.matched} activity log entries older than ${days} days (before ${before}) would be deleted\n`
        : `deleted ${result.deleted} activity log entries older than ${days} days (before ${before})\n`,
    );
  } catch (error) {
    if (internal.isMissingTableError(error)) {
      throw new CliError(
        `the activity log table ${table} does not exist: run svc migrations upgrade (or svc init)`,
      );
    }
    throw new CliError(`purging the activity log failed: ${firstLine(error)}`);
  } finally {
    await db.close().catch(() => undefined);
  }
}

/** `svc audit purge [--days N] [--dry-run]`: deletes activity log entries older than N days, in batches. */
export const auditCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'audit <command>',
  describe: 'Maintain the activity log',
  builder: (yargs: Argv<GlobalArgs>) =>
    yargs
      .command({
        command: 'purge',
        describe: 'Delete activity log entries older than --days (default: activity_log_retention_days)',
        builder: (y: Argv<GlobalArgs>) =>
          y
            .option('days', {
              type: 'number',
              describe: 'Keep this many days [default: activity_log_retention_days]',
            })
            .option('dry-run', {
              type: 'boolean',
              default: false,
              describe: 'Only count what would be deleted',
            })
            .example('$0 audit purge --days 90', 'Delete entries older than 90 days')
            .example('$0 audit purge --dry-run', 'Count what activity_log_retention_days would delete'),
        handler: (argv) => purge(argv as AuditPurgeArgs),
      })
      .example('$0 audit purge --days 90', 'Delete activity log entries older than 90 days')
      .demandCommand(1, 'Name an audit command: purge'),
  handler: () => undefined,
};
