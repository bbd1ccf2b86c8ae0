import * as internal from '@svc/core/internal';
import type { Argv, CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { confirm } from '../prompts.js';
import { formatTable } from './users-format.js';
import { withNamedUser } from './users-named.js';

// `svc users sessions <username> [--revoke-all [--include-tokens]] [--yes]` (SPEC-2 "Administration and
// self-service", CLI paragraph; SPEC-3 §7 rule 2; docs/sessions-and-tokens.md): the sessions as
// `GET /admin/user/{user_id}/sessions` lists them, and the same revocation as
// `DELETE /admin/user/{user_id}/sessions[?includeTokens=true]`.

interface SessionsArgs {
  baseDir?: string;
  username: string;
  revokeAll?: boolean;
  includeTokens?: boolean;
  yes?: boolean;
}

/**
 * Ends every session of the user from a command and records the end of each live impersonation among them as
 * the server does (SPEC-3 §4: an entry of the user with the superuser as impersonator, `impersonation ended by
 * revocation`; method `CLI`, the command as the path). How many sessions ended.
 */
export async function endSessionsByCommand(
  project: {
    settings: Parameters<typeof internal.authTables>[0];
    db: Parameters<typeof internal.createSessionStore>[0];
    tables: Parameters<typeof internal.createSessionStore>[1];
  },
  user: { id: string; username: string },
  command: string,
): Promise<number> {
  const { settings, db, tables } = project;
  const store = internal.createSessionStore(db, tables, internal.authTables(settings, db.dialect).session);
  const ended = await store.end(user.id, new Date());
  const { record } = internal.createStandaloneActivityLog(db, settings);
  for (const row of ended) {
    if (!row.impersonatorId || !row.live || !record) continue;
    await record({
      userId: user.id,
      username: user.username,
      impersonatorId: row.impersonatorId,
      method: 'CLI',
      path: command,
      statusCode: 200,
      description: 'impersonation ended by revocation',
    });
  }
  return ended.length;
}

const when = (value: Date) => value.toISOString().replace(/\.\d{3}Z$/, 'Z');

export const sessionsCommand: CommandModule<{ baseDir?: string }, SessionsArgs> = {
  command: 'sessions <username>',
  describe: "List a user's active sessions, or end them all",
  builder: (y) =>
    y
      .positional('username', { type: 'string', demandOption: true })
      .option('revoke-all', {
        type: 'boolean',
        default: false,
        describe: 'End every session: refresh and access tokens are refused at once',
      })
      .option('include-tokens', {
        type: 'boolean',
        default: false,
        describe: "With --revoke-all: also delete the user's personal access tokens",
      })
      .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'Do not ask for confirmation' })
      .example('$0 users sessions alice', "alice's logins: created, last used, address, user agent")
      .example('$0 users sessions alice --revoke-all --yes', 'Log alice out everywhere (scripts)')
      .example(
        '$0 users sessions alice --revoke-all --include-tokens --yes',
        'End every login and delete every personal access token of alice',
      ) as Argv<SessionsArgs>,
  handler: (argv) =>
    withNamedUser(argv, async (project, found) => {
      const { settings, db, tables } = project;
      const store = internal.createSessionStore(
        db,
        tables,
        internal.authTables(settings, db.dialect).session,
      );
      const active = await store.listActive(found.id, new Date());
      if (argv.includeTokens && !argv.revokeAll) throw new CliError('--include-tokens needs --revoke-all');
      if (argv.revokeAll) {
        const what = argv.includeTokens ? 'session(s) and every personal access token' : 'session(s)';
        const question = `End all ${active.length} ${what} of user '${found.username}'? [y/N] `;
        if (!argv.yes && !(await confirm(question))) {
          throw new CliError('no session ended: not confirmed (use --yes to skip the question)');
        }
        const ended = await endSessionsByCommand(
          project,
          found,
          `svc users sessions ${found.username} --revoke-all`,
        );
        process.stdout.write(`ended ${ended} session(s) of '${found.username}'\n`);
        if (argv.includeTokens) {
          // SPEC-3 §7 rule 2: the same deletion as the admin route's `includeTokens=true`.
          const tokens = internal.createPersonalTokenStore(
            db,
            internal.personalTokenTables(settings, db.dialect),
            tables,
          );
          const deleted = await tokens.deleteAllOf(found.id);
          process.stdout.write(`deleted ${deleted} personal access token(s) of '${found.username}'\n`);
        }
        return;
      }
      if (active.length === 0) {
        process.stdout.write(`'${found.username}' has no active sessions\n`);
        return;
      }
      process.stdout.write(
        formatTable(
          ['ID', 'CREATED', 'LAST USED', 'IP', 'USER AGENT'],
          active.map((s) => [s.id, when(s.createdAt), when(s.lastUsedAt), s.ip || '-', s.userAgent || '-']),
        ),
      );
    }),
};
