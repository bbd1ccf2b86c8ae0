import * as internal from '@svc/core/internal';
import type { Argv, CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { openAuthProject } from '../project.js';
import { closePrompts, confirm } from '../prompts.js';
import { normaliseEmail } from './users-format.js';

// `svc users invite`, `reset-link` and `reset-mfa` (SPEC-2 "Administration and self-service", CLI paragraph):
// the accounts and MFA services of @svc/core, built on the project's auth database as the server builds them.

interface GlobalArgs {
  baseDir?: string;
}

type AuthProject = Awaited<ReturnType<typeof openAuthProject>>;

/**
 * The `tables` of the core modules these commands use, by module name: the same functions the modules declare,
 * imported without the modules themselves (docs/performance.md "The CLI's start").
 */
const MODULE_TABLES = {
  accounts: internal.accountTables,
  mfa: internal.mfaTables,
  webhooks: internal.webhookTables,
} as const;

/** The tables a core module owns, built from the project's settings (as `createApp` builds them). */
export function moduleTables<T>(
  project: Pick<AuthProject, 'settings' | 'db'>,
  name: keyof typeof MODULE_TABLES,
): T {
  return MODULE_TABLES[name](project.settings, project.db.dialect) as T;
}

/** The project's auth database and logger; closed (mail handed over first) when `fn` ends. */
async function withAccounts<T>(
  argv: GlobalArgs,
  fn: (tools: {
    project: AuthProject;
    accounts: internal.AccountService;
    mfa: internal.MfaService;
    mail: ReturnType<typeof internal.createMailDelivery>;
    find(name: string): Promise<{ id: string; username: string } | undefined>;
  }) => Promise<T>,
): Promise<T> {
  const project = await openAuthProject(argv.baseDir);
  const log = internal.createLogger(
    {
      level: internal.effectiveLogLevel(project.settings),
      format: project.settings.log_format,
      stream: process.stderr,
    },
    'svc',
  );
  const { settings, db } = project;
  // The built-in mailer (SMTP with smtp_url); a project's own `mailer` lives in its app, not here.
  const mail = internal.createMailDelivery({
    settings,
    log: log.child('mail'),
    localeOf: async () => settings.default_locale,
  });
  const ports = internal.createPortRegistry();
  ports.provide('mail', mail);
  // SPEC-3 §3: an invitation's user.created and an MFA reset's mfa.disabled are recorded as the routes do.
  ports.provide(
    'webhooks',
    internal.createStandaloneWebhookOutbox(
      db,
      settings,
      moduleTables<internal.WebhookTables>(project, 'webhooks'),
    ),
  );
  // Link cooldowns and used TOTP steps are the server's business: nothing here needs them shared.
  const cache = new internal.MemoryCache(1_000, settings.cache_prefix);
  const accounts = internal.createAccountService({
    settings,
    store: internal.createAccountStore(
      db,
      moduleTables<internal.AccountTables>(project, 'accounts'),
      project.tables,
    ),
    cache,
    log: log.child('accounts'),
    ports,
    now: () => new Date(),
  });
  const mfa = internal.createMfaService({
    settings,
    cache,
    store: internal.createMfaStore(db, moduleTables<internal.MfaTables>(project, 'mfa'), project.tables),
    sender: internal.createLoggingSender(log.child('mfa')),
    log: log.child('mfa'),
    ports,
  });
  const manager = internal.createUserManager({
    db,
    tables: project.tables,
    hashPassword: internal.hashPassword,
    now: () => new Date(),
  });
  try {
    return await fn({ project, accounts, mfa, mail, find: (name) => manager.find(name) });
  } catch (error) {
    // The services' refusals name a stable code: the CLI prints its English message and the code.
    if (error instanceof internal.SvcError) {
      throw new CliError(`${internal.translator('en')(error.code, error.params)} (${error.code})`);
    }
    throw error;
  } finally {
    closePrompts();
    await mail.close().catch(() => undefined);
    await db.close().catch(() => undefined);
  }
}

/** A username naming an existing user, as `svc users update` finds it. */
async function existingUser(
  find: (name: string) => Promise<{ id: string; username: string } | undefined>,
  raw: string,
) {
  const name = String(raw).trim();
  if (name === '') throw new CliError('the username is empty');
  const found = await find(name);
  if (!found) throw new CliError(`user '${name}' does not exist`);
  return found;
}

interface InviteArgs extends GlobalArgs {
  email: string;
  username?: string;
  staff?: boolean;
  printLink?: boolean;
  invitedBy?: string;
}

export const inviteCommand: CommandModule<GlobalArgs, InviteArgs> = {
  command: 'invite <email>',
  describe: 'Invite a user by email: an active account without a password and a link to choose one',
  builder: (y) =>
    y
      .positional('email', { type: 'string', demandOption: true })
      .option('username', { type: 'string', describe: 'Username (default: the email)' })
      .option('staff', { type: 'boolean', default: false, describe: 'Make the user staff' })
      .option('print-link', {
        type: 'boolean',
        default: false,
        describe: 'Print the invitation link instead of mailing it',
      })
      .option('invited-by', {
        type: 'string',
        describe: 'Name the mail gives as the inviter (default: project_name, else app_name)',
      })
      .example('$0 users invite ann@example.com', 'Mail an invitation (needs smtp_url)')
      .example(
        '$0 users invite ann@example.com --username ann --print-link',
        'Print the link to hand over yourself',
      ) as Argv<InviteArgs>,
  handler: (argv) =>
    withAccounts(argv, async ({ project, accounts, mail }) => {
      const { settings } = project;
      const email = normaliseEmail(argv.email);
      if (!email) throw new CliError('the email is empty');
      // SPEC-2 "Mail and links": without smtp_url nothing is delivered; refuse before creating an account
      // nobody hears of.
      if (!argv.printLink && !mail.smtp) {
        throw new CliError('smtp_url is not set: the invitation cannot be mailed (use --print-link)');
      }
      const { created, user, link } = await accounts.invite(
        argv.invitedBy ?? (settings.project_name || settings.app_name),
        { email, username: argv.username, isStaff: argv.staff },
        { printLink: argv.printLink },
      );
      const what = created
        ? `invited '${user.username}' <${user.email}>`
        : `sent '${user.username}' a new invitation`;
      if (link) {
        process.stdout.write(
          `${what}; the link works once, until ${link.expiresAt.toISOString()}:\n${link.url}\n`,
        );
      } else {
        process.stdout.write(`${what}; the link was mailed to ${user.email}\n`);
      }
    }),
};

interface ResetLinkArgs extends GlobalArgs {
  username: string;
}

export const resetLinkCommand: CommandModule<GlobalArgs, ResetLinkArgs> = {
  command: 'reset-link <username>',
  describe: 'Print a one-time password-reset link for the user (sends no mail)',
  builder: (y) =>
    y
      .positional('username', { type: 'string', demandOption: true })
      .example(
        '$0 users reset-link alice',
        'A link to hand to alice; earlier reset links stop working',
      ) as Argv<ResetLinkArgs>,
  handler: (argv) =>
    withAccounts(argv, async ({ accounts, find }) => {
      const user = await existingUser(find, argv.username);
      const link = await accounts.passwordResetLink(user.id);
      if (!link) {
        throw new CliError(
          `user '${user.username}' is inactive or has not accepted an invitation yet (svc users invite sends a new one)`,
        );
      }
      process.stdout.write(
        `password-reset link for '${user.username}', works once, until ${link.expiresAt.toISOString()}:\n${link.url}\n`,
      );
    }),
};

interface ResetMfaArgs extends GlobalArgs {
  username: string;
  yes?: boolean;
}

export const resetMfaCommand: CommandModule<GlobalArgs, ResetMfaArgs> = {
  command: 'reset-mfa <username>',
  describe: "Remove a user's MFA configuration, backup codes and pending challenges",
  builder: (y) =>
    y
      .positional('username', { type: 'string', demandOption: true })
      .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'Do not ask for confirmation' })
      .example(
        '$0 users reset-mfa alice',
        'After a confirmation question: alice logs in with the password only',
      ) as Argv<ResetMfaArgs>,
  handler: (argv) =>
    withAccounts(argv, async ({ mfa, find }) => {
      const user = await existingUser(find, argv.username);
      if (!argv.yes && !(await confirm(`Remove the MFA of user '${user.username}'? [y/N] `))) {
        throw new CliError('MFA not reset: not confirmed (use --yes to skip the question)');
      }
      const before = await mfa.statusOf(user.id);
      await mfa.resetByAdmin(null, user.id);
      process.stdout.write(
        before.enabled
          ? `removed the MFA (${before.method}) of '${user.username}': the next login needs the password only\n`
          : `'${user.username}' had no active MFA; any pending setup was removed\n`,
      );
    }),
};
