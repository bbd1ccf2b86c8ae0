#!/usr/bin/env node
// docs/performance.md "The outbox's PostgreSQL cost, taken apart": what an event costs PostgreSQL alone, with
// pgbench (10 clients, prepared statements) on a fresh database that `svc serve` migrated, with one endpoint of
// `user.updated` and 20 users. Variants run in interleaved rounds of SECONDS_ each:
//   off       the user's update alone (a PATCH with webhooks off; kernel/db/user-update.ts)
//   on        the update with the outbox's CTEs (webhooks/store.ts `recordWith`): one event, one delivery
//   on-nofk   `on` with the delivery's two foreign keys dropped (their row locks on the event and the endpoint)
//   life      `on`, and for every 64 of them one claim of the due deliveries and their settlement, as the
//             delivery worker does (webhooks/store.ts `claimStatement`, `settleStatement`): an event's whole life
//   life-full `life` with the due index of every delivery, `(status, next_attempt_at)` (before 2026-11-28),
//             instead of the pending ones only (`(next_attempt_at) where status = 'pending'`, webhooks/tables.ts)
// The statements are written out here after the code's; pgbench counts a claim as a transaction too (1 in 33).
//
//   SVC_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/lib/outbox-pg.mjs   # ROUNDS_=3 SECONDS_=8
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from './pg.mjs';
import { ADMIN, call, createProject, login, startServe } from './project.mjs';
import { median } from './stats.mjs';

const adminUrl = process.env.SVC_TEST_POSTGRES_URL;
if (!adminUrl) throw new Error('SVC_TEST_POSTGRES_URL is not set');
const rounds = Number(process.env.ROUNDS_ ?? 3);
const seconds = Number(process.env.SECONDS_ ?? 8);

const change = `\\set u random(0, 19)
\\set n random(1, 1000000)
with changed as (update svc_user set first_name = 'n' || :n
  where id = (select id from svc_user where username = 'outbox-' || :u) returning *)`;
// The event's data: about the size of a user's (pgbench reads a colon as a variable, hence chr(58)).
const outbox = `,
subscribed as (select id from svc_webhook_endpoint where enabled = true
  and (events like '%"user.updated"%' escape '\\' or events like '%"*"%' escape '\\')),
event as (insert into svc_webhook_event (id, type, data, created_at)
  select gen_random_uuid(), 'user.updated', repeat('{"k" ' || chr(58) || ' "vvvvvvvvvvvvvv"}', 12), now()
  where exists (select 1 from subscribed) and exists (select 1 from changed) returning id, created_at as at),
outbox as (insert into svc_webhook_delivery (event_id, endpoint_id, status, attempts, next_attempt_at, created_at)
  select event.id, subscribed.id, 'pending', 0, event.at, event.at from event cross join subscribed
  returning event_id as id)`;
const claimAndSettle = `\\set c random(1, 1000000000)
with c as (update svc_webhook_delivery set next_attempt_at = now() + interval '15 s', leased_by = 'c' || :c
  where id in (select id from svc_webhook_delivery where status = 'pending' and next_attempt_at <= now()
    order by next_attempt_at limit 64 for update skip locked) returning id)
select coalesce(array_agg(id), '{}') as ids from c \\gset
update svc_webhook_delivery set status = 'succeeded', attempts = 1, last_status_code = 204, next_attempt_at = null,
  delivered_at = now(), leased_by = null where id = any(:ids::bigint[]) and leased_by = 'c' || :c and status = 'pending';
`;

const dir = mkdtempSync(join(tmpdir(), 'svc-outbox-pg-'));
writeFileSync(join(dir, 'off.sql'), `${change}\nselect * from changed;\n`);
writeFileSync(join(dir, 'on.sql'), `${change}${outbox}\nselect * from changed;\n`);
writeFileSync(join(dir, 'cs.sql'), claimAndSettle);

const database = await pg.create(adminUrl);
const project = await createProject({ databaseUrl: database.url });
const db = new URL(database.url);
const name = db.pathname.slice(1);
const psql = (command) =>
  execFileSync(
    'psql',
    ['-h', db.hostname, '-p', db.port || '5432', '-U', db.username, '-Atqc', command, name],
    {
      encoding: 'utf8',
    },
  );
const pgbench = (...files) => {
  const out = execFileSync(
    'pgbench',
    [
      '-h',
      db.hostname,
      '-p',
      db.port || '5432',
      '-U',
      db.username,
      '-n',
      '-M',
      'prepared',
      '-c',
      '10',
      '-j',
      '2',
    ].concat(['-T', String(seconds), ...files.flatMap((f) => ['-f', join(dir, f)]), name]),
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return {
    tps: Number(/tps = ([\d.]+)/.exec(out)[1]),
    transactions: Number(/actually processed: (\d+)/.exec(out)[1]),
  };
};
const due = (partial) =>
  psql(
    `drop index if exists svc_webhook_delivery_due_idx; create index svc_webhook_delivery_due_idx on svc_webhook_delivery ${
      partial ? "(next_attempt_at) where status = 'pending'" : '(status, next_attempt_at)'
    }`,
  );
const foreignKeys = (on) =>
  psql(
    on
      ? `alter table svc_webhook_delivery add constraint d_event_fk foreign key (event_id) references svc_webhook_event (id) on delete cascade;
         alter table svc_webhook_delivery add constraint d_endpoint_fk foreign key (endpoint_id) references svc_webhook_endpoint (id) on delete cascade`
      : `alter table svc_webhook_delivery drop constraint if exists d_event_fk, drop constraint if exists d_endpoint_fk`,
  );
try {
  const server = await startServe(project.dir, {
    webhooks_enabled: true,
    webhooks_allow_private_targets: true,
  });
  const admin = (await login(server.base, ADMIN)).access_token;
  await call(server.base, 'POST', '/api/admin/webhooks', {
    token: admin,
    json: { url: 'https://receiver.invalid/hook', events: ['user.updated'] },
  });
  for (let i = 0; i < 20; i++)
    await call(server.base, 'POST', '/api/auth/register', {
      json: { username: `outbox-${i}`, password: 'bench-outbox-password-1' },
    });
  await server.stop();
  // The project's own foreign keys, renamed so that a variant can drop and add them back.
  for (const row of psql(
    "select conname from pg_constraint where conrelid = 'svc_webhook_delivery'::regclass and contype = 'f'",
  )
    .trim()
    .split('\n'))
    psql(`alter table svc_webhook_delivery drop constraint "${row}"`);
  foreignKeys(true);

  const variants = {
    off: () => pgbench('off.sql'),
    on: () => pgbench('on.sql'),
    'on-nofk': () => {
      foreignKeys(false);
      try {
        return pgbench('on.sql');
      } finally {
        foreignKeys(true);
      }
    },
    life: () => pgbench('on.sql@64', 'cs.sql@2'),
    'life-full': () => {
      due(false);
      try {
        return pgbench('on.sql@64', 'cs.sql@2');
      } finally {
        due(true);
      }
    },
  };
  const tps = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const walOf = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++)
    for (const [k, run] of Object.entries(variants)) {
      // Every variant starts from the same state: nothing due, the tables vacuumed.
      psql(
        "update svc_webhook_delivery set status = 'succeeded', next_attempt_at = null where status = 'pending'",
      );
      psql('vacuum analyze svc_webhook_delivery');
      psql('vacuum analyze svc_webhook_event');
      const lsn = psql('select pg_current_wal_lsn()').trim();
      const { tps: rate, transactions } = run();
      // WAL of the whole cluster while the variant ran, per transaction (a claim counts as one).
      const wal = Number(psql(`select pg_current_wal_lsn() - '${lsn}'::pg_lsn`)) / transactions;
      const pending = psql("select count(*) from svc_webhook_delivery where status = 'pending'").trim();
      tps[k].push(rate);
      walOf[k].push(wal);
      console.log(
        `round ${r + 1} ${k}: ${rate.toFixed(0)} tps, ${wal.toFixed(0)} B of WAL a transaction ` +
          `(deliveries left pending: ${pending})`,
      );
    }
  const off = median(tps.off);
  for (const [k, list] of Object.entries(tps))
    console.log(
      `${k.padEnd(10)} median ${median(list).toFixed(0)} tps (${list.map((x) => x.toFixed(0)).join(', ')}), ${(
        (median(list) / off) *
        100
      ).toFixed(0)}% of off; WAL ${median(walOf[k]).toFixed(0)} B a transaction`,
    );
  // The two forms of the due index over the deliveries the rounds left (all but a few finished).
  psql(
    "update svc_webhook_delivery set status = 'succeeded', next_attempt_at = null where status = 'pending'",
  );
  psql('vacuum analyze svc_webhook_delivery');
  const sizeOf = (partial) => {
    due(partial);
    return Number(psql("select pg_relation_size('svc_webhook_delivery_due_idx')")) / 1024;
  };
  const rows = psql('select count(*) from svc_webhook_delivery').trim();
  console.log(
    `due index over ${rows} deliveries: ${sizeOf(false).toFixed(0)} KiB of every delivery, ` +
      `${sizeOf(true).toFixed(0)} KiB of the pending ones`,
  );
} finally {
  project.remove();
  await database.drop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
