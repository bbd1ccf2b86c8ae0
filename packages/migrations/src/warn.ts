import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import type { AppRuntime } from '@svc/core';
import { pendingRevisions, versionTableName } from './apply.js';
import { DEFAULT_TARGET, chainDir, dialectName, readChain, targetDir } from './chain.js';

/**
 * Logs a warning when the auth database is behind the head revision of its dialect's chain
 * (`migrations/<target>/<dialect>`), so an upgrade of @svc/core never silently leaves a database behind
 * (docs/upgrading.md), and when the target's folder has no revisions for the database's dialect. Silent when
 * the project has no migrations folder; never throws (a failed check is logged, the server still starts).
 * @example
 * const runtime = await app.init({ baseDir });
 * await warnIfBehind(runtime, baseDir);
 */
export async function warnIfBehind(
  runtime: Pick<AppRuntime, 'authDb' | 'settings' | 'log' | 'authDatabaseMissing'>,
  baseDir: string,
  target: string = DEFAULT_TARGET,
): Promise<number> {
  if (runtime.authDatabaseMissing) return 0;
  try {
    if (!existsSync(targetDir(baseDir, target))) return 0;
    const dialect = runtime.authDb.dialect;
    const dir = await chainDir(baseDir, target, dialect);
    const shown = relative(baseDir, dir).split('\\').join('/');
    const chain = await readChain(dir);
    if (chain.length === 0) {
      runtime.log.warn(
        `${shown} holds no revisions for the ${dialectName(dialect)} auth database; write them where the project is developed with \`svc migrations revision "<message>" --autogenerate --target-name ${target}\` and commit them`,
      );
      return 0;
    }
    const pending = await pendingRevisions({
      db: runtime.authDb,
      dir,
      target,
      versionTable: versionTableName(runtime.settings),
    });
    if (pending.length > 0) {
      runtime.log.warn(
        `the auth database is behind: ${pending.length} revision(s) of ${shown} not applied (head ${pending.at(-1)!.id}); run \`svc migrations upgrade --target-name ${target}\``,
        { pending: pending.map((r) => r.id) },
      );
    }
    return pending.length;
  } catch (error) {
    runtime.log.warn(`cannot check the migrations of ${target}: ${(error as Error).message}`);
    return 0;
  }
}
