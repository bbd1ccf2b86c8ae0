import * as internal from '@svc/core/internal';
import type { Argv, CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { confirm } from '../prompts.js';
import { DEFAULT_APP_SPEC, loadAppIfPresent } from '../load-app.js';
import {
  countOf,
  declaredByApp,
  listOf,
  withRbacProject,
  type GlobalArgs,
  type RbacProject,
} from './permissions.js';
import { formatTable } from './users-format.js';

// ---------------------------------------------------------------------------------------------------------------
// Rules shared by the commands

/** A group name as stored: trimmed, 1 to 150 characters (the column; the admin routes take the same). */
function groupName(raw: string): string {
  const name = String(raw).trim();
  if (name === '') throw new CliError('the group name is empty');
  if (name.length > internal.GROUP_NAME_MAX_LENGTH) {
    throw new CliError(`the group name is longer than ${internal.GROUP_NAME_MAX_LENGTH} characters`);
  }
  return name;
}

async function existingGroup(project: RbacProject, raw: string): Promise<internal.GroupRow> {
  const name = groupName(raw);
  const group = await project.store.groupByName(name);
  if (!group) throw new CliError(`group '${name}' does not exist (svc groups ls lists them)`);
  return group;
}

/**
 * The stored permissions named by `codenames`. A codename the app's routes declare (the table
 * `svc permissions sync` reads) but not stored yet is created with its description, as sync would; one no route
 * declares is refused, naming the fix. `appSpec` false (revoke): every codename must be stored.
 */
async function existingPermissions(
  project: RbacProject,
  codenames: readonly unknown[],
  appSpec: string | false,
): Promise<{ rows: internal.PermissionRow[]; created: string[] }> {
  const wanted = [...new Set(codenames.map((c) => String(c).trim()).filter((c) => c !== ''))];
  if (wanted.length === 0) throw new CliError('name at least one permission codename');
  const stored = await project.store.permissionsByCodename(wanted);
  const found = new Set(stored.map((row) => row.codename));
  const missing = wanted.filter((codename) => !found.has(codename));
  if (missing.length === 0) return { rows: stored, created: [] };
  // `revoke` takes nothing to create: a codename not stored is granted to nobody.
  const app =
    appSpec === false ? undefined : await loadAppIfPresent({ baseDir: project.baseDir, spec: appSpec });
  const declared = app ? await declaredByApp(app, project.baseDir) : new Map<string, string>();
  const undeclared = missing.filter((codename) => !declared.has(codename));
  if (undeclared.length > 0) {
    const names = listOf(undeclared.map((c) => `'${c}'`));
    throw new CliError(
      app || appSpec === false
        ? `no permission ${names}: no route of the app declares it (svc permissions ls lists the stored ones)`
        : `no permission ${names}: svc permissions sync creates the codenames your routers declare`,
    );
  }
  const toCreate = missing.map((codename) => ({ codename, description: declared.get(codename) ?? '' }));
  await project.store.createMissingPermissions(toCreate);
  return { rows: await project.store.permissionsByCodename(wanted), created: missing };
}

/** The user named `raw` (as written or by its normal form, like `svc users`). */
async function existingUser(project: RbacProject, raw: string): Promise<{ id: string; username: string }> {
  const name = String(raw).trim();
  if (name === '') throw new CliError('the username is empty');
  const manager = internal.createUserManager({
    db: project.db,
    tables: project.tables,
    hashPassword: internal.hashPassword,
    now: () => new Date(),
  });
  const user = await manager.find(name);
  if (!user) throw new CliError(`user '${name}' does not exist`);
  return user;
}

// ---------------------------------------------------------------------------------------------------------------
// Commands

interface CreateArgs extends GlobalArgs {
  app: string;
  name: string;
  description?: string;
  permission?: string[];
}

const createCommand: CommandModule<GlobalArgs, CreateArgs> = {
  command: 'create <name>',
  describe: 'Create a group, optionally with permissions',
  builder: (y) =>
    y
      .positional('name', { type: 'string', demandOption: true })
      .option('description', { type: 'string', default: '' })
      .option('permission', {
        alias: 'p',
        type: 'string',
        array: true,
        describe: 'A codename the group grants (repeatable)',
      })
      .option('app', {
        type: 'string',
        default: DEFAULT_APP_SPEC,
        describe: 'The app whose routes declare the codenames: <module>:<export>, relative to --base-dir',
      })
      .example('$0 groups create editors -p notes.read -p notes.write', 'A group with two permissions')
      .example(
        '$0 groups create readers --description "Read-only staff"',
        'An empty group',
      ) as Argv<CreateArgs>,
  handler: (argv) =>
    withRbacProject(argv, async (project) => {
      const name = groupName(argv.name);
      const description = String(argv.description ?? '');
      if (description.length > internal.DESCRIPTION_MAX_LENGTH) {
        throw new CliError(`the description is longer than ${internal.DESCRIPTION_MAX_LENGTH} characters`);
      }
      if (await project.store.groupByName(name)) throw new CliError(`group '${name}' already exists`);
      const { rows: permissions, created } = argv.permission?.length
        ? await existingPermissions(project, argv.permission, argv.app)
        : { rows: [], created: [] };
      await project.store.createGroup({ name, description, permissionIds: permissions.map((p) => p.id) });
      const granted = permissions.map((p) => p.codename);
      process.stdout.write(
        createdLine(created) + `created group '${name}'${granted.length ? ` with ${listOf(granted)}` : ''}\n`,
      );
    }),
};

const lsCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'ls',
  describe: 'List groups with their member count and permissions',
  builder: (y) => y.example('$0 groups ls', 'Every group'),
  handler: (argv) =>
    withRbacProject(argv, async ({ store }) => {
      const groups = await store.listGroups();
      if (groups.length === 0) {
        process.stdout.write('no groups\n');
        return;
      }
      const members = await store.memberCounts();
      process.stdout.write(
        formatTable(
          ['NAME', 'MEMBERS', 'PERMISSIONS', 'DESCRIPTION'],
          groups.map((g) => [
            g.name,
            String(members.get(g.id) ?? 0),
            g.permissions.map((p) => p.codename).join(',') || '-',
            g.description || '-',
          ]),
        ),
      );
    }),
};

interface GrantArgs extends GlobalArgs {
  app?: string;
  group: string;
  codenames: string[];
}

/** The line saying which declared codenames a grant stored first (as `svc permissions sync` would). */
function createdLine(created: readonly string[]): string {
  if (created.length === 0) return '';
  return `added ${countOf(created.length, 'permission')} the app's routes declare: ${listOf(created)}\n`;
}

const grantCommand: CommandModule<GlobalArgs, GrantArgs> = {
  command: 'grant <group> <codenames..>',
  describe: "Give a group permissions (stored codenames, or ones the app's routes declare)",
  builder: (y) =>
    y
      .positional('group', { type: 'string', demandOption: true })
      .positional('codenames', { type: 'string', array: true, demandOption: true })
      .option('app', {
        type: 'string',
        default: DEFAULT_APP_SPEC,
        describe: 'The app whose routes declare the codenames: <module>:<export>, relative to --base-dir',
      })
      .example(
        '$0 groups grant editors notes.write',
        'Members of editors may now write notes',
      ) as Argv<GrantArgs>,
  handler: (argv) =>
    withRbacProject(argv, async (project) => {
      const group = await existingGroup(project, argv.group);
      const { rows: permissions, created } = await existingPermissions(
        project,
        argv.codenames,
        argv.app ?? DEFAULT_APP_SPEC,
      );
      const added = new Set(
        await project.store.grantToGroup(
          group.id,
          permissions.map((p) => p.id),
          project.record,
        ),
      );
      const granted = permissions.filter((p) => added.has(p.id)).map((p) => p.codename);
      const held = permissions.filter((p) => !added.has(p.id)).map((p) => p.codename);
      const lines = created.length ? [createdLine(created).trimEnd()] : [];
      if (granted.length) lines.push(`granted ${listOf(granted)} to group '${group.name}'`);
      if (held.length) lines.push(`group '${group.name}' already had ${listOf(held)}`);
      process.stdout.write(lines.map((line) => `${line}\n`).join(''));
    }),
};

const revokeCommand: CommandModule<GlobalArgs, GrantArgs> = {
  command: 'revoke <group> <codenames..>',
  describe: 'Take permissions from a group',
  builder: (y) =>
    y
      .positional('group', { type: 'string', demandOption: true })
      .positional('codenames', { type: 'string', array: true, demandOption: true })
      .example(
        '$0 groups revoke editors notes.write',
        'Editors keep their other permissions',
      ) as Argv<GrantArgs>,
  handler: (argv) =>
    withRbacProject(argv, async (project) => {
      const group = await existingGroup(project, argv.group);
      const { rows: permissions } = await existingPermissions(project, argv.codenames, false);
      const removed = new Set(
        await project.store.revokeFromGroup(
          group.id,
          permissions.map((p) => p.id),
          project.record,
        ),
      );
      const revoked = permissions.filter((p) => removed.has(p.id)).map((p) => p.codename);
      const absent = permissions.filter((p) => !removed.has(p.id)).map((p) => p.codename);
      const lines = [];
      if (revoked.length) lines.push(`revoked ${listOf(revoked)} from group '${group.name}'`);
      if (absent.length) lines.push(`group '${group.name}' did not have ${listOf(absent)}`);
      process.stdout.write(lines.map((line) => `${line}\n`).join(''));
    }),
};

interface MemberArgs extends GlobalArgs {
  group: string;
  username: string;
}

const addUserCommand: CommandModule<GlobalArgs, MemberArgs> = {
  command: 'add-user <group> <username>',
  describe: "Make a user a member of a group (they get the group's permissions)",
  builder: (y) =>
    y
      .positional('group', { type: 'string', demandOption: true })
      .positional('username', { type: 'string', demandOption: true })
      .example(
        '$0 groups add-user editors alice',
        'alice gets the permissions of editors',
      ) as Argv<MemberArgs>,
  handler: (argv) =>
    withRbacProject(argv, async (project) => {
      const group = await existingGroup(project, argv.group);
      const user = await existingUser(project, argv.username);
      const added = await project.store.addUserToGroup(user.id, group.id, project.record);
      process.stdout.write(
        added
          ? `added user '${user.username}' to group '${group.name}'\n`
          : `user '${user.username}' already is in group '${group.name}'\n`,
      );
    }),
};

const removeUserCommand: CommandModule<GlobalArgs, MemberArgs> = {
  command: 'remove-user <group> <username>',
  describe: 'End a user’s membership of a group',
  builder: (y) =>
    y
      .positional('group', { type: 'string', demandOption: true })
      .positional('username', { type: 'string', demandOption: true })
      .example(
        '$0 groups remove-user editors alice',
        'alice loses what only editors gave her',
      ) as Argv<MemberArgs>,
  handler: (argv) =>
    withRbacProject(argv, async (project) => {
      const group = await existingGroup(project, argv.group);
      const user = await existingUser(project, argv.username);
      const removed = await project.store.removeUserFromGroup(user.id, group.id, project.record);
      process.stdout.write(
        removed
          ? `removed user '${user.username}' from group '${group.name}'\n`
          : `user '${user.username}' is not in group '${group.name}'\n`,
      );
    }),
};

interface DeleteArgs extends GlobalArgs {
  name: string;
  yes?: boolean;
}

const deleteCommand: CommandModule<GlobalArgs, DeleteArgs> = {
  command: 'delete <name>',
  describe: 'Delete a group (its members lose what it granted)',
  builder: (y) =>
    y
      .positional('name', { type: 'string', demandOption: true })
      .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'Do not ask for confirmation' })
      .example('$0 groups delete editors --yes', 'Without the question (scripts)') as Argv<DeleteArgs>,
  handler: (argv) =>
    withRbacProject(argv, async (project) => {
      const group = await existingGroup(project, argv.name);
      const members = (await project.store.memberCounts()).get(group.id) ?? 0;
      const question = `Delete group '${group.name}' (${countOf(members, 'member')})? [y/N] `;
      if (!argv.yes && !(await confirm(question))) {
        throw new CliError('not deleted: not confirmed (use --yes to skip the question)');
      }
      await project.store.deleteGroup(group.id, project.record);
      process.stdout.write(`deleted group '${group.name}'\n`);
    }),
};

/** `svc groups ...` (docs/cli.md "svc groups"). */
export const groupsCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'groups <command>',
  describe: 'Manage groups: create, ls, grant, revoke, add-user, remove-user, delete',
  /* eslint-disable @typescript-eslint/no-explicit-any -- yargs types a command by its own arguments; the parent's builder only passes them on */
  builder: (y) =>
    y
      .command(createCommand as CommandModule<GlobalArgs, any>)
      .command(lsCommand)
      .command(grantCommand as CommandModule<GlobalArgs, any>)
      .command(revokeCommand as CommandModule<GlobalArgs, any>)
      .command(addUserCommand as CommandModule<GlobalArgs, any>)
      .command(removeUserCommand as CommandModule<GlobalArgs, any>)
      .command(deleteCommand as CommandModule<GlobalArgs, any>)
      .example('$0 groups create editors -p notes.read', 'A group granting notes.read')
      .example('$0 groups add-user editors alice', 'alice joins it')
      .demandCommand(1, 'Name a groups command: create, ls, grant, revoke, add-user, remove-user or delete.'),
  /* eslint-enable @typescript-eslint/no-explicit-any */
  handler: () => undefined,
};
