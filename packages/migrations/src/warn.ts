import { existsSync } from 'node:fs';
import type { AppRuntime } from '@svc/core';
import { pendingRevisions, versionTableName } from './apply.js';
import { DEFAULT_TARGET, targetDir } from './chain.js';

/**
 * Logs a warning when the auth database is behind the head revision of `migrations/<target>` (issue 3: an
 * upgrade of @svc/core must never silently leave a database behind). Silent when the project has no
 * migrations folder; never throws (a failed check is logged, the server still starts).
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
    const dir = targetDir(baseDir, target);
    if (!existsSync(dir)) return 0;
    const pending = await pendingRevisions({
      db: runtime.authDb,
      dir,
      target,
      versionTable: versionTableName(runtime.settings),
    });
    if (pending.length > 0) {
      runtime.log.warn(
        `the auth database is behind: ${pending.length} revision(s) of migrations/${target} not applied (head ${pending.at(-1)!.id}); run \`svc migrations upgrade --target-name ${target}\``,
        { pending: pending.map((r) => r.id) },
      );
    }
    return pending.length;
  } catch (error) {
    runtime.log.warn(`cannot check the migrations of ${target}: ${(error as Error).message}`);
    return 0;
  }
}
