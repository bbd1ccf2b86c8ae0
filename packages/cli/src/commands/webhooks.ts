import * as internal from '@svc/core/internal';
import type { Argv, CommandModule } from 'yargs';
import { CliError } from '../errors.js';
import { openAuthProject } from '../project.js';
import { moduleTables } from './users-accounts.js';
import { formatTable } from './users-format.js';

interface GlobalArgs {
  baseDir?: string;
  exitCode?: number;
}

/**
 * The webhook service of SPEC-3 §3 on the project's auth database, without the app: the same rules and codes as
 * the `/admin/webhooks` routes (a refusal prints its English message and its code).
 */
async function withWebhooks<T>(
  argv: GlobalArgs,
  fn: (service: internal.WebhookService) => Promise<T>,
): Promise<T> {
  const project = await openAuthProject(argv.baseDir);
  try {
    const store = internal.createWebhookStore(
      project.db,
      moduleTables<internal.WebhookTables>(project, 'webhooks'),
    );
    return await fn(
      internal.createWebhookService({ settings: project.settings, store, now: () => new Date() }),
    );
  } catch (error) {
    if (error instanceof internal.SvcError) {
      throw new CliError(`${internal.translator('en')(error.code, error.params)} (${error.code})`);
    }
    throw error;
  } finally {
    await project.db.close().catch(() => undefined);
  }
}

const listCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'list',
  describe: 'List the webhook endpoints (without secrets)',
  handler: (argv) =>
    withWebhooks(argv, async (service) => {
      const rows = (await service.list()).map((e) => [
        e.id,
        e.enabled ? 'yes' : 'no',
        e.events.join(','),
        e.url,
      ]);
      process.stdout.write(formatTable(['id', 'enabled', 'events', 'url'], rows) + '\n');
    }),
};

interface CreateArgs extends GlobalArgs {
  url: string;
  events: string[];
  description?: string;
  disabled?: boolean;
}

const createCommand: CommandModule<GlobalArgs, CreateArgs> = {
  command: 'create <url>',
  describe: 'Create a webhook endpoint and print its secret (shown this once)',
  builder: (y) =>
    y
      .positional('url', { type: 'string', demandOption: true })
      .option('events', {
        alias: 'e',
        type: 'string',
        array: true,
        default: ['*'],
        describe: 'Event types (docs/webhooks.md), or * for every type',
      })
      .option('description', { type: 'string' })
      .option('disabled', { type: 'boolean', default: false, describe: 'Create it disabled' })
      .example(
        '$0 webhooks create https://hooks.example.com/svc -e user.created user.deleted',
        '',
      ) as Argv<CreateArgs>,
  handler: (argv) =>
    withWebhooks(argv, async (service) => {
      const events = argv.events
        .flatMap((e) => String(e).split(','))
        .map((e) => e.trim())
        .filter(Boolean);
      const created = await service.create({
        url: argv.url,
        events,
        enabled: !argv.disabled,
        ...(argv.description !== undefined ? { description: argv.description } : {}),
      });
      process.stdout.write(`created webhook ${created.id}\nsecret: ${created.secret}\n`);
    }),
};

interface DeliveriesArgs extends GlobalArgs {
  id: string;
  status?: 'pending' | 'succeeded' | 'failed';
  limit: number;
}

const deliveriesCommand: CommandModule<GlobalArgs, DeliveriesArgs> = {
  command: 'deliveries <id>',
  describe: "List an endpoint's deliveries, newest first",
  builder: (y) =>
    y
      .positional('id', { type: 'string', demandOption: true })
      .option('status', { choices: ['pending', 'succeeded', 'failed'] as const })
      .option('limit', { type: 'number', default: 25 }) as Argv<DeliveriesArgs>,
  handler: (argv) =>
    withWebhooks(argv, async (service) => {
      const page = await service.deliveries(argv.id, {
        page: 1,
        pageSize: Math.min(Math.max(1, argv.limit), 200),
        ...(argv.status ? { status: argv.status } : {}),
      });
      const rows = page.items.map((d) => [
        d.id,
        d.type,
        d.status,
        String(d.attempts),
        d.lastStatusCode === null ? '' : String(d.lastStatusCode),
        d.eventId,
        d.createdAt,
      ]);
      process.stdout.write(
        formatTable(['id', 'type', 'status', 'attempts', 'last', 'event id', 'created'], rows) + '\n',
      );
    }),
};

interface RedeliverArgs extends GlobalArgs {
  id: string;
  delivery: string;
}

const redeliverCommand: CommandModule<GlobalArgs, RedeliverArgs> = {
  command: 'redeliver <id> <delivery>',
  describe: 'Deliver an event again (same webhook-id); a running server sends it',
  builder: (y) =>
    y
      .positional('id', { type: 'string', demandOption: true })
      .positional('delivery', { type: 'string', demandOption: true }) as Argv<RedeliverArgs>,
  handler: (argv) =>
    withWebhooks(argv, async (service) => {
      await service.redeliver(argv.id, String(argv.delivery));
      process.stdout.write(`queued delivery ${argv.delivery} of webhook ${argv.id} again\n`);
    }),
};

/** `svc webhooks ...` (docs/webhooks.md, docs/cli.md "svc webhooks"). */
export const webhooksCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'webhooks <command>',
  describe: 'Manage webhook endpoints: list, create, deliveries, redeliver',
  /* eslint-disable @typescript-eslint/no-explicit-any -- yargs types a command by its own arguments; the parent's builder only passes them on */
  builder: (y) =>
    y
      .command(listCommand)
      .command(createCommand as CommandModule<GlobalArgs, any>)
      .command(deliveriesCommand as CommandModule<GlobalArgs, any>)
      .command(redeliverCommand as CommandModule<GlobalArgs, any>)
      .demandCommand(1, 'Name a webhooks command: list, create, deliveries or redeliver.'),
  /* eslint-enable @typescript-eslint/no-explicit-any */
  handler: () => undefined,
};
