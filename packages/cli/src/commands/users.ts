import * as internal from '@svc/core/internal';
import type { Argv, CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { openAuthProject, type loadProjectSettings } from '../project.js';
import { closePrompts, confirm, promptNewPassword } from '../prompts.js';
import { inviteCommand, moduleTables, resetLinkCommand, resetMfaCommand } from './users-accounts.js';
import { formatTable, normaliseEmail } from './users-format.js';
import { endSessionsByCommand, sessionsCommand } from './users-sessions.js';
// SPEC-3 section 1: social login
import { identitiesCommand } from './users-identities.js';

/** SPEC "Command-line interface": `users update` refuses shorter passwords unless `--force`. */
export const CLI_MIN_PASSWORD_LENGTH = 8;

type Settings = ReturnType<typeof loadProjectSettings>;
type CoreTables = internal.CoreTables;
type Database = Awaited<ReturnType<typeof internal.openDatabase>>;

interface GlobalArgs {
  baseDir?: string;
  exitCode?: number;
}

// ---------------------------------------------------------------------------------------------------------------
// Project database

/** The auth database of the project in `--base-dir`, with the core tables built from its settings. */
interface UserProject {
  settings: Settings;
  db: Database;
  tables: CoreTables;
  close(): Promise<void>;
}

async function openUserProject(baseDirOption: string | undefined): Promise<UserProject> {
  const { settings, db, tables } = await openAuthProject(baseDirOption);
  return { settings, db, tables, close: () => db.close() };
}

async function withProject<T>(argv: GlobalArgs, fn: (project: UserProject) => Promise<T>): Promise<T> {
  const project = await openUserProject(argv.baseDir);
  try {
    return await fn(project);
  } finally {
    closePrompts();
    await project.close().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Rules shared by the commands

/** The logger of a command's own lines (stderr), at the project's level. */
function commandLog(project: UserProject) {
  return internal.createLogger(
    {
      level: internal.effectiveLogLevel(project.settings),
      format: project.settings.log_format,
      stream: process.stderr,
    },
    'svc',
  );
}

/** `events`: the standalone sink of a command that tells the hosts (`svc users delete`), when there is one. */
function managerOf(
  project: UserProject,
  events?: Awaited<ReturnType<typeof internal.createStandaloneEventSink>>,
) {
  // SPEC-3 §7 rule 4: a change of email or a deactivation ends the user's links, as on the server.
  const links = internal.createAccountStore(
    project.db,
    moduleTables<internal.AccountTables>(project, 'accounts'),
    project.tables,
  );
  // SPEC-3 §3: a change by a command emits its webhook event like the routes do.
  const webhooks = internal.createStandaloneWebhookOutbox(
    project.db,
    project.settings,
    moduleTables<internal.WebhookTables>(project, 'webhooks'),
  );
  const orgs = internal.createOrganizationManager({
    db: project.db,
    settings: project.settings,
    webhooks,
    ...(events ? { events } : {}),
  });
  return internal.createUserManager({
    db: project.db,
    tables: project.tables,
    hashPassword: internal.hashPassword,
    now: () => new Date(),
    async endLinks(userId, change) {
      await links.endLinks(userId, change);
      // docs/organizations.md "Invitations end with the account", as on the server.
      if (change === 'deactivated') await orgs.service.endInvitationsOf(userId);
    },
    webhooks,
    // SPEC-2 "Sessions" and SPEC-3 §4: a new password or a deactivation ends the sessions as on the server,
    // an impersonation among them recorded as ended by revocation.
    endSessions: async (user) => {
      await endSessionsByCommand(project, user, `svc users update ${user.username}`);
    },
    // SPEC-3 §2/§3: the memberships' events and the invitations ended, in the deletion's transaction.
    beforeDelete: (tx, userId) => orgs.service.beforeUserDeleted(tx, userId),
    // SPEC-3 §4: demoting or deactivating a superuser ends their impersonations, recorded in the activity
    // log as on the server (method `CLI`, the command as the path), and told to the hosts' superusers through
    // the shared cache's event bus when there is one (docs/users-and-tokens.md "Impersonation").
    endImpersonations: async (superuser, cause) => {
      const sessions = internal.createSessionStore(
        project.db,
        project.tables,
        internal.authTables(project.settings, project.db.dialect).session,
      );
      const manager = internal.createUserManager({
        db: project.db,
        tables: project.tables,
        hashPassword: internal.hashPassword,
        now: () => new Date(),
      });
      const { record } = internal.createStandaloneActivityLog(project.db, project.settings);
      const ended = await internal.endImpersonationsByCommand({
        sessions,
        usernameOf: async (userId) => (await manager.findById(userId))?.username ?? null,
        superuserId: superuser.id,
        cause,
        command: `svc users update ${superuser.username}`,
        ...(record ? { record } : {}),
      });
      if (ended.length === 0) return;
      const events = await internal.createStandaloneEventSink(project.settings, commandLog(project));
      if (!events) return;
      try {
        for (const row of ended) {
          events.sessionsEnded?.(row.userId, [row.id]);
          events.emit('session_revoked', { userId: row.userId, sessionId: row.id });
          events.emit('impersonation_ended', { userId: row.userId, impersonatorId: superuser.id });
        }
      } finally {
        await events.close();
      }
    },
  });
}

/** A refusal of the user manager becomes the one-line CLI error. */
async function refusalsAsCliErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof internal.UserManagementError) throw new CliError(error.message);
    throw error;
  }
}

/**
 * The normal form of a new username (kernel/identity.ts: NFKC, lower case, trimmed, 3 to 150 characters, one
 * script, no invisible character), or the reason it is refused as one CLI line. `svc init` names its
 * superuser through it too.
 */
export function newUsername(raw: string): string {
  const check = internal.checkUsername(String(raw));
  if (check.problem) throw new CliError(internal.describeUsernameProblem(check));
  return check.username;
}

/** A username naming an existing user: found as written or by its normal form (`UserManager.find`). */
function existingName(raw: string): string {
  const name = String(raw).trim();
  if (name === '') throw new CliError('the username is empty');
  return name;
}

// ---------------------------------------------------------------------------------------------------------------
// Commands

interface CreateArgs extends GlobalArgs {
  username: string;
  password?: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  staff?: boolean;
  superuser?: boolean;
  inactive?: boolean;
  force?: boolean;
}

const createCommand: CommandModule<GlobalArgs, CreateArgs> = {
  command: 'create <username>',
  describe: 'Create a user (password prompted, hidden and confirmed, when --password is missing)',
  builder: (y) =>
    y
      .positional('username', { type: 'string', demandOption: true })
      .option('password', { type: 'string', describe: 'Password (prompted when missing)' })
      .option('email', { type: 'string' })
      .option('first-name', { type: 'string' })
      .option('last-name', { type: 'string' })
      .option('staff', {
        type: 'boolean',
        describe: 'Staff status (default: on with --superuser, off otherwise; --no-staff turns it off)',
      })
      .option('superuser', { type: 'boolean', default: false })
      .option('inactive', { type: 'boolean', default: false, describe: 'Create the account disabled' })
      .option('force', {
        type: 'boolean',
        default: false,
        describe: 'Accepted for symmetry with update; the server password_min_length still applies',
      })
      .example('$0 users create alice --email alice@example.com', 'Create alice; the password is prompted')
      .example(
        '$0 users create ops --superuser --password "$OPS_PASSWORD"',
        'A superuser, non-interactive',
      ) as Argv<CreateArgs>,
  handler: (argv) =>
    withProject(argv, (project) =>
      refusalsAsCliErrors(async () => {
        const username = newUsername(argv.username);
        const email = normaliseEmail(argv.email);
        const manager = managerOf(project);
        if (await manager.find(argv.username)) throw new CliError(`user '${username}' already exists`);
        const password = argv.password ?? (await promptNewPassword());
        // SPEC "Command-line interface": the server-side policy applies to `create` even with --force.
        const minLength = project.settings.password_min_length;
        if (!internal.meetsPasswordPolicy(password, minLength)) {
          throw new CliError(internal.describePasswordPolicy(minLength));
        }
        // docs/cli.md "users": a superuser made on the command line is staff too (as `svc init`'s), unless
        // --no-staff; SPEC "User" leaves it open (superusers pass every staff check either way).
        const isStaff = argv.staff ?? Boolean(argv.superuser);
        await manager.create({
          username: argv.username,
          password,
          email,
          firstName: argv.firstName?.trim(),
          lastName: argv.lastName?.trim(),
          isActive: !argv.inactive,
          isStaff,
          isSuperuser: Boolean(argv.superuser),
        });
        const flags = [argv.superuser && 'superuser', isStaff && 'staff', argv.inactive && 'inactive'].filter(
          Boolean,
        );
        process.stdout.write(`created user '${username}'${flags.length ? ` (${flags.join(', ')})` : ''}\n`);
      }),
    ),
};

interface UpdateArgs extends GlobalArgs {
  username: string;
  password?: string;
  promptPassword?: boolean;
  email?: string;
  firstName?: string;
  lastName?: string;
  staff?: boolean;
  superuser?: boolean;
  active?: boolean;
  force?: boolean;
}

const updateCommand: CommandModule<GlobalArgs, UpdateArgs> = {
  command: 'update <username>',
  describe: 'Change a user; a new password lifts a login lock and ends every login',
  builder: (y) =>
    y
      .positional('username', { type: 'string', demandOption: true })
      .option('password', { type: 'string', describe: 'New password' })
      .option('prompt-password', {
        alias: 'P',
        type: 'boolean',
        describe: 'Ask for the new password (hidden)',
      })
      .option('email', { type: 'string', describe: 'New email; an empty value clears it' })
      .option('first-name', { type: 'string' })
      .option('last-name', { type: 'string' })
      .option('staff', { type: 'boolean', describe: '--staff / --no-staff' })
      .option('superuser', { type: 'boolean', describe: '--superuser / --no-superuser' })
      .option('active', { type: 'boolean', describe: '--active / --no-active' })
      .option('force', {
        type: 'boolean',
        default: false,
        describe: `Accept a password shorter than ${CLI_MIN_PASSWORD_LENGTH} characters`,
      })
      .example('$0 users update alice -P', 'New password (prompted): lifts a lock, ends every login')
      .example('$0 users update alice --staff --no-active', 'Make alice staff and deactivate her')
      .example("$0 users update alice --email ''", 'Clear the email address') as Argv<UpdateArgs>,
  handler: (argv) =>
    withProject(argv, (project) =>
      refusalsAsCliErrors(async () => {
        const name = existingName(argv.username);
        if (argv.password !== undefined && argv.promptPassword) {
          throw new CliError('give either --password or --prompt-password, not both');
        }
        const given = {
          email: normaliseEmail(argv.email),
          firstName: argv.firstName === undefined ? undefined : String(argv.firstName).trim(),
          lastName: argv.lastName === undefined ? undefined : String(argv.lastName).trim(),
          isStaff: argv.staff,
          isSuperuser: argv.superuser,
          isActive: argv.active,
        };
        const wantsPassword = argv.password !== undefined || Boolean(argv.promptPassword);
        if (!wantsPassword && Object.values(given).every((value) => value === undefined)) {
          throw new CliError('nothing to change: give at least one option (see svc users update --help)');
        }
        const manager = managerOf(project);
        const found = await manager.find(name);
        if (!found) throw new CliError(`user '${name}' does not exist`);
        const username = found.username;
        const password = argv.promptPassword ? await promptNewPassword() : argv.password;
        // SPEC "Command-line interface": the CLI minimum is 8 characters; --force bypasses it.
        if (password !== undefined && !argv.force && password.length < CLI_MIN_PASSWORD_LENGTH) {
          throw new CliError(
            `the password must be at least ${CLI_MIN_PASSWORD_LENGTH} characters long (--force accepts a shorter one)`,
          );
        }
        const changed = await manager.update(username, { ...given, password });
        process.stdout.write(
          changed.length
            ? `updated user '${username}': ${changed.join(', ')}\n`
            : `user '${username}' unchanged\n`,
        );
      }),
    ),
};

interface DeleteArgs extends GlobalArgs {
  username: string;
  yes?: boolean;
}

const deleteCommand: CommandModule<GlobalArgs, DeleteArgs> = {
  command: 'delete <username>',
  describe: 'Delete a user with their groups, permissions, settings and MFA data',
  builder: (y) =>
    y
      .positional('username', { type: 'string', demandOption: true })
      .option('yes', {
        alias: 'y',
        type: 'boolean',
        default: false,
        describe: 'Do not ask for confirmation',
      })
      .example('$0 users delete alice', 'Delete alice after a confirmation question')
      .example('$0 users delete alice --yes', 'Without the question (scripts)') as Argv<DeleteArgs>,
  handler: (argv) =>
    withProject(argv, (project) =>
      refusalsAsCliErrors(async () => {
        const name = existingName(argv.username);
        const manager = managerOf(project);
        const found = await manager.find(name);
        if (!found) throw new CliError(`user '${name}' does not exist`);
        const username = found.username;
        if (!argv.yes && !(await confirm(`Delete user '${username}' and all their data? [y/N] `))) {
          throw new CliError('not deleted: not confirmed (use --yes to skip the question)');
        }
        // SPEC-3 §2: not the only owner of an organization that has other members.
        const orgs = internal.createOrganizationManager({ db: project.db, settings: project.settings });
        const stranded = await orgs.store.soleOwnerships(found.id);
        if (stranded.length > 0)
          throw new CliError(
            `not deleted: '${username}' is the only owner of ${stranded.map((s) => `'${s}'`).join(', ')}, which has other members (svc orgs set-role makes another owner)`,
          );
        // SPEC-3 §2: each removed membership is told to the member and superusers, as on the server, through
        // the shared cache's event bus when there is one (docs/organizations.md).
        const events = await internal.createStandaloneEventSink(project.settings, commandLog(project));
        try {
          await managerOf(project, events).remove(username);
        } finally {
          await events?.close();
        }
        process.stdout.write(`deleted user '${username}'\n`);
      }),
    ),
};

interface LsArgs extends GlobalArgs {
  filter?: string;
}

const lsCommand: CommandModule<GlobalArgs, LsArgs> = {
  command: 'ls [filter]',
  describe: 'List users (filter: a substring of username or email)',
  builder: (y) =>
    y
      .positional('filter', { type: 'string', describe: 'Substring of username or email' })
      .example('$0 users ls', 'Every user')
      .example(
        '$0 users ls example.com',
        'Users whose username or email contains example.com',
      ) as Argv<LsArgs>,
  handler: (argv) =>
    withProject(argv, async (project) => {
      const filter = argv.filter === undefined ? '' : String(argv.filter).trim();
      const rows = await managerOf(project).list(filter);
      if (rows.length === 0) {
        process.stdout.write(filter ? `no users match '${filter}'\n` : 'no users\n');
        return;
      }
      const yesNo = (value: boolean) => (value ? 'yes' : 'no');
      const when = (value: Date | null) => (value ? value.toISOString().replace(/\.\d{3}Z$/, 'Z') : 'never');
      process.stdout.write(
        formatTable(
          ['USERNAME', 'EMAIL', 'ACTIVE', 'STAFF', 'SUPERUSER', 'LAST LOGIN'],
          rows.map((row) => [
            row.username,
            row.email ?? '-',
            yesNo(row.isActive),
            yesNo(row.isStaff),
            yesNo(row.isSuperuser),
            when(row.lastLoginAt),
          ]),
        ),
      );
    }),
};

const encryptMfaSecretsCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'encrypt-mfa-secrets',
  describe: 'Encrypt TOTP secrets saved as plain text',
  builder: (y) =>
    y.example('$0 users encrypt-mfa-secrets', 'Once, after the upgrade that encrypts TOTP secrets'),
  handler: (argv) =>
    withProject(argv, async (project) => {
      // The MFA feature owns the encryption; it reads its tables by module name like a running app.
      const tables: Record<string, Record<string, unknown>> = { core: project.tables };
      const { coreModules } = await internal.loadCoreModules();
      for (const module of coreModules) {
        if (module.tables) tables[module.name] = module.tables(project.settings, project.db.dialect);
      }
      const { encrypted } = await internal.encryptPlainMfaSecrets({
        settings: project.settings,
        authDb: project.db,
        tables,
      });
      process.stdout.write(`encrypted ${encrypted} plain-text MFA secret(s)\n`);
    }),
};

/** `svc users ...` (SPEC "Command-line interface"). */
export const usersCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'users <command>',
  describe:
    'Manage users: create, update, delete, ls, invite, reset-link, reset-mfa, sessions, identities, encrypt-mfa-secrets',
  /* eslint-disable @typescript-eslint/no-explicit-any -- yargs types a command by its own arguments; the parent's builder only passes them on */
  builder: (y) =>
    y
      .command(createCommand as CommandModule<GlobalArgs, any>)
      .command(updateCommand as CommandModule<GlobalArgs, any>)
      .command(deleteCommand as CommandModule<GlobalArgs, any>)
      .command(lsCommand as CommandModule<GlobalArgs, any>)
      .command(encryptMfaSecretsCommand)
      .command(inviteCommand as CommandModule<GlobalArgs, any>)
      .command(resetLinkCommand as CommandModule<GlobalArgs, any>)
      .command(resetMfaCommand as CommandModule<GlobalArgs, any>)
      .command(sessionsCommand as CommandModule<GlobalArgs, any>)
      .command(identitiesCommand as CommandModule<GlobalArgs, any>)
      .example('$0 users create alice --staff', 'Create a staff user (password prompted)')
      .example('$0 users ls', 'List users with their flags')
      .demandCommand(
        1,
        'Name a users command: create, update, delete, ls, invite, reset-link, reset-mfa, sessions, identities or encrypt-mfa-secrets.',
      ),
  /* eslint-enable @typescript-eslint/no-explicit-any */
  handler: () => undefined,
};
