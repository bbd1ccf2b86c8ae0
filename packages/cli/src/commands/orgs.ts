import * as internal from '@svc/core/internal';
import type { Argv, CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { DEFAULT_APP_SPEC, loadAppIfPresent } from '../load-app.js';
import { openAuthProject } from '../project.js';
import { closePrompts, confirm } from '../prompts.js';
import { moduleTables } from './users-accounts.js';
import { formatTable } from './users-format.js';

// `svc orgs` (SPEC-3 §2; docs/cli.md "svc orgs"): organizations from the command line, with the rules of the
// routes (last owner, known roles), acting as a superuser would. Project roles come from the app's
// `createApp({ organizationRoles })` when the app module is there.

interface GlobalArgs {
  baseDir?: string;
  exitCode?: number;
}

interface OrgProject {
  manager: internal.OrganizationManager;
  users: internal.UserManager;
}

async function withOrgs<T>(argv: GlobalArgs, fn: (project: OrgProject) => Promise<T>): Promise<T> {
  const { baseDir, settings, db, tables } = await openAuthProject(argv.baseDir);
  try {
    const app = await loadAppIfPresent({ baseDir, spec: DEFAULT_APP_SPEC }).catch(() => undefined);
    const manager = internal.createOrganizationManager({
      db,
      settings,
      roles: app?.options.organizationRoles ?? {},
      // SPEC-3 §3: a change by a command emits its webhook event like the routes do.
      webhooks: internal.createStandaloneWebhookOutbox(
        db,
        settings,
        moduleTables<internal.WebhookTables>({ settings, db }, 'webhooks'),
      ),
    });
    const users = internal.createUserManager({
      db,
      tables,
      hashPassword: internal.hashPassword,
      now: () => new Date(),
    });
    try {
      return await fn({ manager, users });
    } catch (error) {
      // The rules' refusals (last owner, unknown role, taken slug) as one line each.
      if (error instanceof internal.SvcError) {
        const t = internal.translator('en');
        throw new CliError(`${t(error.code, error.params)} (${error.code})`);
      }
      throw error;
    }
  } finally {
    closePrompts();
    await db.close().catch(() => undefined);
  }
}

async function organizationOf(project: OrgProject, slug: string) {
  const row = await project.manager.store.bySlug(String(slug).trim());
  if (!row) throw new CliError(`organization '${slug}' does not exist (svc orgs list lists them)`);
  return row;
}

async function userOf(project: OrgProject, name: string) {
  const user = await project.users.find(String(name).trim());
  if (!user) throw new CliError(`user '${name}' does not exist`);
  return user;
}

interface SlugArgs extends GlobalArgs {
  slug: string;
}
interface CreateArgs extends SlugArgs {
  name?: string;
  owner: string;
}
interface MemberArgs extends SlugArgs {
  username: string;
  role?: string;
}
interface DeleteArgs extends SlugArgs {
  yes?: boolean;
}

const listCommand: CommandModule<GlobalArgs, GlobalArgs & { search?: string }> = {
  command: 'list [search]',
  describe: 'List organizations, newest first, with their member count',
  builder: (y) =>
    y
      .positional('search', { type: 'string', describe: 'Substring of name or slug' })
      .example('$0 orgs list', 'Every organization') as Argv<GlobalArgs & { search?: string }>,
  handler: (argv) =>
    withOrgs(argv, async ({ manager }) => {
      const { rows } = await manager.store.listAll({ search: argv.search, limit: 10_000, offset: 0 });
      if (rows.length === 0) {
        process.stdout.write('no organizations\n');
        return;
      }
      process.stdout.write(
        formatTable(
          ['SLUG', 'NAME', 'MEMBERS', 'ID'],
          rows.map((row) => [row.slug, row.name, String(row.memberCount), row.id]),
        ),
      );
    }),
};

const createCommand: CommandModule<GlobalArgs, CreateArgs> = {
  command: 'create <slug>',
  describe: 'Create an organization with its owner',
  builder: (y) =>
    y
      .positional('slug', { type: 'string', demandOption: true })
      .option('name', { type: 'string', describe: 'Display name (default: the slug)' })
      .option('owner', { type: 'string', demandOption: true, describe: 'Username of its first owner' })
      .example(
        '$0 orgs create acme --name "Acme Inc" --owner alice',
        'alice owns the new organization',
      ) as Argv<CreateArgs>,
  handler: (argv) =>
    withOrgs(argv, async (project) => {
      const slug = String(argv.slug).trim();
      if (!internal.ORGANIZATION_SLUG_PATTERN.test(slug))
        throw new CliError('the slug must be 3 to 50 characters of a-z, 0-9 and -');
      const name = String(argv.name ?? slug).trim();
      if (name.length < 1 || name.length > 100) throw new CliError('the name must be 1 to 100 characters');
      const owner = await userOf(project, argv.owner);
      const created = await project.manager.service.createFor(owner.id, { slug, name });
      process.stdout.write(`created organization '${slug}' (${created.id}) owned by '${owner.username}'\n`);
    }),
};

const showCommand: CommandModule<GlobalArgs, SlugArgs> = {
  command: 'show <slug>',
  describe: 'Show an organization and its members',
  builder: (y) => y.positional('slug', { type: 'string', demandOption: true }) as Argv<SlugArgs>,
  handler: (argv) =>
    withOrgs(argv, async (project) => {
      const org = await organizationOf(project, argv.slug);
      const { items, total } = await project.manager.service.members(org.id, { page: 1, pageSize: 200 });
      process.stdout.write(`${org.slug}  ${org.name}  ${org.id}  created ${org.createdAt.toISOString()}\n`);
      process.stdout.write(
        `${total} member${total === 1 ? '' : 's'}${total > items.length ? ` (first ${items.length} shown)` : ''}\n`,
      );
      if (items.length > 0)
        process.stdout.write(
          formatTable(
            ['USERNAME', 'ROLE', 'JOINED'],
            items.map((m) => [m.username, m.role, m.joinedAt]),
          ),
        );
    }),
};

const addMemberCommand: CommandModule<GlobalArgs, MemberArgs> = {
  command: 'add-member <slug> <username>',
  describe: 'Make a user a member (or change their role when they are one)',
  builder: (y) =>
    y
      .positional('slug', { type: 'string', demandOption: true })
      .positional('username', { type: 'string', demandOption: true })
      .option('role', {
        type: 'string',
        default: 'member',
        describe: 'owner, admin, member or a project role',
      })
      .example('$0 orgs add-member acme bob --role admin', 'bob administers acme') as Argv<MemberArgs>,
  handler: (argv) =>
    withOrgs(argv, async (project) => {
      const org = await organizationOf(project, argv.slug);
      const user = await userOf(project, argv.username);
      const role = argv.role ?? 'member';
      await project.manager.service.addMember(org.id, user.id, role);
      process.stdout.write(`'${user.username}' is ${role} of '${org.slug}'\n`);
    }),
};

const setRoleCommand: CommandModule<GlobalArgs, MemberArgs> = {
  command: 'set-role <slug> <username> <role>',
  describe: "Change a member's role (the last owner stays one)",
  builder: (y) =>
    y
      .positional('slug', { type: 'string', demandOption: true })
      .positional('username', { type: 'string', demandOption: true })
      .positional('role', { type: 'string', demandOption: true }) as Argv<MemberArgs>,
  handler: (argv) =>
    withOrgs(argv, async (project) => {
      const org = await organizationOf(project, argv.slug);
      const user = await userOf(project, argv.username);
      await project.manager.service.setRole(org.id, user.id, String(argv.role));
      process.stdout.write(`'${user.username}' is ${argv.role} of '${org.slug}'\n`);
    }),
};

const removeMemberCommand: CommandModule<GlobalArgs, MemberArgs> = {
  command: 'remove-member <slug> <username>',
  describe: 'End a membership (not the last owner’s while others remain)',
  builder: (y) =>
    y
      .positional('slug', { type: 'string', demandOption: true })
      .positional('username', { type: 'string', demandOption: true }) as Argv<MemberArgs>,
  handler: (argv) =>
    withOrgs(argv, async (project) => {
      const org = await organizationOf(project, argv.slug);
      const user = await userOf(project, argv.username);
      await project.manager.service.removeMembership(org.id, user.id);
      process.stdout.write(`removed '${user.username}' from '${org.slug}'\n`);
    }),
};

const deleteCommand: CommandModule<GlobalArgs, DeleteArgs> = {
  command: 'delete <slug>',
  describe: 'Delete an organization with its memberships and invitations',
  builder: (y) =>
    y
      .positional('slug', { type: 'string', demandOption: true })
      .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'Do not ask for confirmation' })
      .example('$0 orgs delete acme --yes', 'Without the question (scripts)') as Argv<DeleteArgs>,
  handler: (argv) =>
    withOrgs(argv, async (project) => {
      const org = await organizationOf(project, argv.slug);
      if (!argv.yes && !(await confirm(`Delete organization '${org.slug}' and its memberships? [y/N] `)))
        throw new CliError('not deleted: not confirmed (use --yes to skip the question)');
      await project.manager.service.deleteOrganization(org.id);
      process.stdout.write(`deleted organization '${org.slug}'\n`);
    }),
};

/** `svc orgs ...` (docs/cli.md "svc orgs"). */
export const orgsCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'orgs <command>',
  describe: 'Manage organizations: list, create, show, add-member, remove-member, set-role, delete',
  /* eslint-disable @typescript-eslint/no-explicit-any -- yargs types a command by its own arguments; the parent's builder only passes them on */
  builder: (y) =>
    y
      .command(listCommand as CommandModule<GlobalArgs, any>)
      .command(createCommand as CommandModule<GlobalArgs, any>)
      .command(showCommand as CommandModule<GlobalArgs, any>)
      .command(addMemberCommand as CommandModule<GlobalArgs, any>)
      .command(removeMemberCommand as CommandModule<GlobalArgs, any>)
      .command(setRoleCommand as CommandModule<GlobalArgs, any>)
      .command(deleteCommand as CommandModule<GlobalArgs, any>)
      .example('$0 orgs create acme --owner alice', 'A new organization owned by alice')
      .demandCommand(
        1,
        'Name an orgs command: list, create, show, add-member, remove-member, set-role or delete.',
      ),
  /* eslint-enable @typescript-eslint/no-explicit-any */
  handler: () => undefined,
};
