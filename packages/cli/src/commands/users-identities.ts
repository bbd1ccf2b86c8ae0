import * as internal from '@svc/core/internal';
import type { Argv, CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { moduleTables } from './users-accounts.js';
import { formatTable } from './users-format.js';
import { withNamedUser } from './users-named.js';

// `svc users identities <username> [--unlink ID]` (SPEC-3 section 1, docs/social-login.md): the identities as
// `GET /admin/user/{user_id}/identities` lists them, and the same unlinking as
// `DELETE /admin/user/{user_id}/identities/{identity_id}` (the last way to log in is kept).

interface IdentitiesArgs {
  baseDir?: string;
  username: string;
  unlink?: string;
}

const when = (value: Date | null) => (value ? value.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-');

export const identitiesCommand: CommandModule<{ baseDir?: string }, IdentitiesArgs> = {
  command: 'identities <username>',
  describe: "List a user's linked sign-in identities, or unlink one",
  builder: (y) =>
    y
      .positional('username', { type: 'string', demandOption: true })
      .option('unlink', { type: 'string', describe: 'The ID of the identity to unlink' })
      .example('$0 users identities alice', "alice's identities: provider, email, linked, last used")
      .example(
        '$0 users identities alice --unlink 3f6c…',
        'Unlink one (refused when it is her last way to log in)',
      ) as Argv<IdentitiesArgs>,
  handler: (argv) =>
    withNamedUser(argv, async (project, found) => {
      const { settings, db, tables } = project;
      const store = internal.createSocialLoginStore(
        db,
        settings,
        internal.socialLoginTables(settings, db.dialect),
        tables,
      );
      if (argv.unlink !== undefined) {
        const id = String(argv.unlink).trim();
        try {
          // SPEC-3 §3: `identity.unlinked` is recorded as for the routes (a no-op while webhooks are off).
          const webhooks = internal.createStandaloneWebhookOutbox(
            db,
            settings,
            moduleTables<internal.WebhookTables>(project, 'webhooks'),
          );
          const removed = await internal.unlinkIdentity(store, found.id, id, webhooks);
          process.stdout.write(
            `unlinked identity ${removed.id} (${removed.provider}) of '${found.username}'\n`,
          );
        } catch (error) {
          if (!(error instanceof internal.SvcError)) throw error;
          if (error.code === 'auth.identity_not_found')
            throw new CliError(`'${found.username}' has no identity '${id}'`);
          if (error.code === 'auth.last_login_method')
            throw new CliError(
              `identity '${id}' is the last way '${found.username}' can log in: set a password or add a passkey first`,
            );
          throw error;
        }
        return;
      }
      const rows = await store.list(found.id);
      if (rows.length === 0) {
        process.stdout.write(`'${found.username}' has no linked identities\n`);
        return;
      }
      process.stdout.write(
        formatTable(
          ['ID', 'PROVIDER', 'EMAIL', 'LINKED', 'LAST USED'],
          rows.map((r) => [r.id, r.provider, r.email ?? '-', when(r.createdAt), when(r.lastUsedAt)]),
        ),
      );
    }),
};
