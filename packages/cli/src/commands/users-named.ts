import * as internal from '@svc/core/internal';
import { CliError } from '../errors.js';
import { openAuthProject, type AuthProject } from '../project.js';
import { closePrompts } from '../prompts.js';

/** A stored user as the user manager finds it. */
export type NamedUser = NonNullable<
  Awaited<ReturnType<ReturnType<typeof internal.createUserManager>['find']>>
>;

/**
 * Runs `fn` with the project in `--base-dir` and the user `username` names (as written or by its normal form,
 * `UserManager.find`), for the commands about one user's things (`svc users sessions`, `svc users identities`).
 * An unknown name is the one-line CLI error; prompts are released and the database closed when `fn` ends.
 */
export async function withNamedUser<T>(
  argv: { baseDir?: string; username: string },
  fn: (project: AuthProject, user: NamedUser) => Promise<T>,
): Promise<T> {
  const project = await openAuthProject(argv.baseDir);
  try {
    const name = String(argv.username).trim();
    const manager = internal.createUserManager({
      db: project.db,
      tables: project.tables,
      hashPassword: internal.hashPassword,
      now: () => new Date(),
    });
    const found = name === '' ? undefined : await manager.find(name);
    if (!found) throw new CliError(`user '${name}' does not exist`);
    return await fn(project, found);
  } finally {
    closePrompts();
    await project.db.close().catch(() => undefined);
  }
}
