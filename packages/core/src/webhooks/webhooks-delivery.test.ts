import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { eventually } from '../../../../testing/smtp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../testing/webhook-receiver.js';
import { openDatabase } from '../kernel/db/database.js';
import type { Settings } from '../kernel/config/schema.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { createStandaloneWebhookOutbox } from './outbox.js';
import type { WebhookTables } from './tables.js';

/** A loopback port nothing listens on (a refused connection). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Delivery {
  id: string;
  type: string;
  eventId: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
}

/**
 * SPEC-3 §3 "Delivery": retries on 5xx, timeouts and refused connections following `webhook_retry_schedule`
 * (here `0,0`: three attempts), a 3xx is a failure (no redirect followed), 410 disables the endpoint, disabled
 * and deleted endpoints get nothing more, expired leases are taken over, and pending deliveries survive a restart.
 */
describeEachDatabase('Webhooks: delivery, retries and leases', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  let receiver: WebhookReceiver;
  const settings = {
    webhooks_enabled: true,
    webhooks_allow_private_targets: true,
    webhook_retry_schedule: '0,0',
    webhook_timeout_seconds: 1,
  };
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({ database, settings });
    admin = await app.loginAs(await app.createUser({ username: 'dl_admin', isSuperuser: true }));
  });
  afterAll(async () => {
    await app.close();
    await receiver.close();
  });

  async function endpoint(url: string, events = ['webhook.test']): Promise<string> {
    const res = await admin.post('/api/admin/webhooks', { url, events });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  }
  async function deliveries(id: string): Promise<Delivery[]> {
    const res = await admin.get(`/api/admin/webhooks/${id}/deliveries`);
    expect(res.status).toBe(200);
    return res.body.data.items as Delivery[];
  }
  /** The endpoint's deliveries once none is pending. */
  async function settled(id: string): Promise<Delivery[]> {
    for (let i = 0; i < 1000; i++) {
      const list = await deliveries(id);
      if (list.length > 0 && list.every((d) => d.status !== 'pending')) return list;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('deliveries still pending');
  }

  it('retries a 5xx answer on the schedule, then fails after 1 + N attempts with the same webhook-id', async () => {
    receiver.answer('/5xx', 503);
    const id = await endpoint(receiver.url('/5xx'));
    await admin.post(`/api/admin/webhooks/${id}/test`);
    const [delivery] = await settled(id);
    expect(delivery).toMatchObject({
      status: 'failed',
      attempts: 3,
      lastStatusCode: 503,
      nextAttemptAt: null,
    });
    expect(receiver.at('/5xx')).toHaveLength(3);
    expect(new Set(receiver.at('/5xx').map((r) => r.headers['webhook-id']))).toEqual(
      new Set([delivery!.eventId]),
    );
  });

  it('retries after a timeout and succeeds on the next answer', async () => {
    receiver.answer('/slow', 'hang', 200);
    const id = await endpoint(receiver.url('/slow'));
    await admin.post(`/api/admin/webhooks/${id}/test`);
    const [delivery] = await settled(id);
    expect(delivery).toMatchObject({
      status: 'succeeded',
      attempts: 2,
      lastStatusCode: 200,
      lastError: null,
    });
  });

  it('retries a refused connection and records why it failed', async () => {
    const id = await endpoint(`http://127.0.0.1:${await closedPort()}/nobody`);
    await admin.post(`/api/admin/webhooks/${id}/test`);
    const [delivery] = await settled(id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: null });
    expect(delivery!.lastError).toContain('ECONNREFUSED');
  });

  it('counts a redirect as a failure and never follows it', async () => {
    receiver.answer('/moved', 302);
    const id = await endpoint(receiver.url('/moved'));
    await admin.post(`/api/admin/webhooks/${id}/test`);
    const [delivery] = await settled(id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: 302 });
    expect(receiver.at('/elsewhere')).toHaveLength(0);
  });

  it('fails the delivery on 410 and disables the endpoint', async () => {
    receiver.answer('/gone', 410);
    const id = await endpoint(receiver.url('/gone'));
    await admin.post(`/api/admin/webhooks/${id}/test`);
    const [delivery] = await settled(id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 410 });
    expect((await admin.get(`/api/admin/webhooks/${id}`)).body.data.enabled).toBe(false);
    expect(receiver.at('/gone')).toHaveLength(1);
  });

  it('ends pending deliveries of a disabled endpoint as failed, records nothing for it, and re-enabling does not resume', async () => {
    receiver.answer('/paused', 'hang');
    const id = await endpoint(receiver.url('/paused'), ['user.updated', 'webhook.test']);
    await admin.post(`/api/admin/webhooks/${id}/test`);
    await eventually(() => receiver.at('/paused').length === 1);
    expect((await admin.patch(`/api/admin/webhooks/${id}`, { enabled: false })).status).toBe(200);
    const [ended] = await settled(id);
    expect(ended).toMatchObject({ status: 'failed', nextAttemptAt: null });
    // A change while disabled has no event for it.
    const user = await app.createUser({ username: 'dl_paused' });
    await admin.patch(`/api/admin/user/${user.id}`, { firstName: 'Paused' });
    expect(await deliveries(id)).toHaveLength(1);
    receiver.answer('/paused', 200);
    await admin.patch(`/api/admin/webhooks/${id}`, { enabled: true });
    expect((await deliveries(id))[0]!.status).toBe('failed');
    expect(receiver.at('/paused')).toHaveLength(1);
  });

  it('delivers nothing more to a deleted endpoint', async () => {
    receiver.answer('/deleted', 500);
    const id = await endpoint(receiver.url('/deleted'));
    await admin.post(`/api/admin/webhooks/${id}/test`);
    await eventually(() => receiver.at('/deleted').length >= 1);
    expect((await admin.delete(`/api/admin/webhooks/${id}`)).status).toBe(204);
    const seen = receiver.at('/deleted').length;
    // The next due attempt would come within a poll; another test event proves a poll has passed.
    const other = await endpoint(receiver.url('/after-delete'));
    await admin.post(`/api/admin/webhooks/${other}/test`);
    await eventually(() => receiver.at('/after-delete').length === 1);
    await admin.post(`/api/admin/webhooks/${other}/test`);
    await eventually(() => receiver.at('/after-delete').length === 2);
    expect(receiver.at('/deleted').length).toBeLessThanOrEqual(seen + 1);
  });

  it('takes over a delivery whose lease ended (its host died) and leaves one whose lease holds', async () => {
    const id = await endpoint(receiver.url('/leases'));
    const rt = app.app.runtime;
    const { webhookDelivery: d, webhookEvent: ev } = rt.tables.webhooks as unknown as WebhookTables;
    const orm = rt.authDb.orm;
    const past = new Date(Date.now() - 1000),
      future = new Date(Date.now() + 3_600_000);
    for (const [eventId, leaseEnd] of [
      ['00000000-0000-4000-8000-00000000000a', past],
      ['00000000-0000-4000-8000-00000000000b', future],
    ] as const) {
      await orm
        .insert(ev)
        .values({ id: eventId, type: 'webhook.test', data: `{"webhookId":"${id}"}`, createdAt: past });
      await orm.insert(d).values({
        eventId,
        endpointId: id,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: leaseEnd,
        leasedBy: 'a-host-that-died',
        createdAt: past,
      });
    }
    await eventually(() => receiver.at('/leases').length === 1);
    expect(receiver.at('/leases')[0]!.headers['webhook-id']).toBe('00000000-0000-4000-8000-00000000000a');
    const [held] = await orm.select().from(d).where(eq(d.eventId, '00000000-0000-4000-8000-00000000000b'));
    expect(held).toMatchObject({ status: 'pending', leasedBy: 'a-host-that-died', attempts: 0 });
  });

  it('delivers events stored while no server ran (svc users) once a server starts again, and purges old records', async () => {
    const id = await endpoint(receiver.url('/restart'), ['user.deleted']);
    const rt = app.app.runtime;
    const runtimeSettings: Settings = rt.settings;
    const tables = rt.tables.webhooks as unknown as WebhookTables;
    await app.close();
    // What `svc users delete` records while the server is down: the outbox on the auth database alone.
    const db = openDatabase({ url: database.url, settings: runtimeSettings, log: rt.log });
    const outbox = createStandaloneWebhookOutbox(db, runtimeSettings, tables);
    await db.transaction((tx) =>
      outbox.record(tx, 'user.deleted', { id: 'offline-user', username: 'offline' }),
    );
    // SPEC-3 §3: finished records older than 30 days go (the worker purges when it starts, then hourly);
    // younger finished ones stay.
    const { webhookDelivery: d, webhookEvent: ev } = tables;
    const old = new Date(Date.now() - 31 * 86_400_000);
    const recent = new Date(Date.now() - 29 * 86_400_000);
    const aged = [
      ['00000000-0000-4000-8000-0000000000c1', old, 'succeeded'],
      ['00000000-0000-4000-8000-0000000000c2', old, 'failed'],
      ['00000000-0000-4000-8000-0000000000c3', recent, 'succeeded'],
    ] as const;
    for (const [eventId, at, status] of aged) {
      await db.orm.insert(ev).values({ id: eventId, type: 'webhook.test', data: '{}', createdAt: at });
      await db.orm
        .insert(d)
        .values({ eventId, endpointId: id, status, attempts: 1, nextAttemptAt: null, createdAt: at });
    }
    await db.close();
    expect(receiver.at('/restart')).toHaveLength(0);
    app = await startTestApp({ database, settings });
    await eventually(() => receiver.at('/restart').length === 1);
    expect(receiver.at('/restart')[0]!.json).toMatchObject({
      type: 'user.deleted',
      data: { id: 'offline-user', username: 'offline' },
    });
    admin = await app.loginAs({ username: 'dl_admin', password: 'correct-horse-battery' });
    expect((await settled(id)).find((x) => x.type === 'user.deleted')).toMatchObject({
      status: 'succeeded',
      attempts: 1,
    });
    const orm = app.app.runtime.authDb.orm;
    const remaining = async () =>
      (await orm.select({ id: ev.id }).from(ev)).map((r) => r.id).filter((e) => e.includes('0000000000c'));
    for (let i = 0; i < 200 && (await remaining()).length > 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await remaining()).toEqual(['00000000-0000-4000-8000-0000000000c3']);
  });
});

/**
 * Settlements are written in batches (docs/webhooks.md "Delivery"): each row still only while the attempt's claim
 * holds it, and a worker that stops writes the settlements it still holds before the database closes.
 */
describeEachDatabase('Webhooks: batched settlements', (database) => {
  it('leave a delivery ended by a disabling failed, and are written when the worker stops', async () => {
    // Answers after a while, so both attempts are in flight while the endpoint is disabled and the app stops.
    const receiver = await startWebhookReceiver({ delayMs: 300 });
    const settings = { webhooks_enabled: true, webhooks_allow_private_targets: true };
    let app = await startTestApp({ database, settings });
    try {
      const admin = await app.loginAs(await app.createUser({ username: 'st_admin', isSuperuser: true }));
      const created = async (path: string) =>
        (await admin.post('/api/admin/webhooks', { url: receiver.url(path), events: ['webhook.test'] })).body
          .data.id as string;
      const disabled = await created('/disabled'),
        kept = await created('/kept');
      await admin.post(`/api/admin/webhooks/${disabled}/test`);
      await admin.post(`/api/admin/webhooks/${kept}/test`);
      await eventually(() => receiver.at('/disabled').length === 1 && receiver.at('/kept').length === 1);
      expect((await admin.patch(`/api/admin/webhooks/${disabled}`, { enabled: false })).status).toBe(200);
      const rt = app.app.runtime;
      const runtimeSettings: Settings = rt.settings;
      const { webhookDelivery: d } = rt.tables.webhooks as unknown as WebhookTables;
      // Stopping waits for both answers (204) and writes their settlements.
      await app.close();
      const db = openDatabase({ url: database.url, settings: runtimeSettings, log: rt.log });
      try {
        const rows = await db.orm.select().from(d);
        expect(rows.find((r) => r.endpointId === disabled)).toMatchObject({
          status: 'failed',
          lastError: 'endpoint disabled',
          deliveredAt: null,
        });
        expect(rows.find((r) => r.endpointId === kept)).toMatchObject({
          status: 'succeeded',
          attempts: 1,
          lastStatusCode: 204,
          leasedBy: null,
        });
      } finally {
        await db.close();
      }
      app = undefined as unknown as TestApp;
    } finally {
      await app?.close();
      await receiver.close();
    }
  });
});
