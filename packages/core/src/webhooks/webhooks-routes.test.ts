import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { eventually } from '../../../../testing/smtp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../testing/webhook-receiver.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { DELIVERY_TOTAL_COUNT_BOUND } from './constants.js';
import type { WebhookTables } from './tables.js';

/**
 * SPEC-3 §3: the admin routes of webhook endpoints, the secret and its rotation, the test event, redelivery,
 * and signatures as the reference Standard Webhooks implementation (the `standardwebhooks` package) verifies
 * them.
 */
describeEachDatabase('Webhooks: endpoints, signatures, rotation, redelivery', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startTestApp({
      database,
      settings: {
        webhooks_enabled: true,
        webhooks_allow_private_targets: true,
        webhook_retry_schedule: '0',
        personal_tokens_enabled: true,
      },
    });
    admin = await app.loginAs(await app.createUser({ username: 'wh_admin', isSuperuser: true }));
  });
  afterAll(async () => {
    await app.close();
    await receiver.close();
  });

  /** Reads `read()` until `done` holds (the worker settles a delivery after the receiver answered). */
  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    for (let i = 0; i < 500; i++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('timed out waiting');
  }

  async function create(path: string, events: string[] = ['*'], extra: { enabled?: boolean } = {}) {
    const res = await admin.post('/api/admin/webhooks', {
      url: receiver.url(path),
      events,
      description: path,
      ...extra,
    });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; secret: string; url: string; events: string[]; enabled: boolean };
  }
  async function deliveries(id: string): Promise<{ id: string; type: string; status: string }[]> {
    const res = await admin.get(`/api/admin/webhooks/${id}/deliveries`);
    expect(res.status).toBe(200);
    return res.body.data.items;
  }

  it('creates an endpoint whose secret is shown once, and lists, reads, changes and deletes it', async () => {
    const created = await create('/crud', ['user.created']);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    const list = await admin.get('/api/admin/webhooks');
    expect(list.status).toBe(200);
    const listed = (list.body.data as { id: string }[]).find((e) => e.id === created.id);
    expect(listed).toMatchObject({ url: receiver.url('/crud'), events: ['user.created'], enabled: true });
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    const one = await admin.get(`/api/admin/webhooks/${created.id}`);
    expect(one.body.data).not.toHaveProperty('secret');
    const patched = await admin.patch(`/api/admin/webhooks/${created.id}`, {
      events: ['user.deleted', 'user.login'],
      enabled: false,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ events: ['user.deleted', 'user.login'], enabled: false });
    expect((await admin.delete(`/api/admin/webhooks/${created.id}`)).status).toBe(204);
    const gone = await admin.get(`/api/admin/webhooks/${created.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.detail[0]).toMatchObject({ code: 'webhook.not_found', loc: ['path', 'webhook_id'] });
  });

  it('refuses a URL that is not absolute https (url_invalid, checked first) and unknown event types', async () => {
    for (const url of ['/relative', 'ftp://example.com/x', 'not a url', 'https://user:pw@example.com/']) {
      const res = await admin.post('/api/admin/webhooks', { url, events: ['nope'] });
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ code: 'webhook.url_invalid', loc: ['body', 'url'] });
    }
    const res = await admin.post('/api/admin/webhooks', {
      url: 'https://example.com/hook',
      events: ['user.created', 'user.exploded'],
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      code: 'webhook.event_unknown',
      loc: ['body', 'events', 1],
    });
    const missing = await admin.post(`/api/admin/webhooks/00000000-0000-4000-8000-000000000000/test`);
    expect(missing.status).toBe(404);
    expect(missing.body.detail[0].code).toBe('webhook.not_found');
  });

  // SPEC-3 §7 rule 3: a personal token is refused on "every webhook route, reading or writing".
  it('refuses non-superusers, and personal access tokens on every webhook route with nothing changed', async () => {
    const user = await app.loginAs(await app.createUser({ username: 'wh_plain' }));
    expect((await user.get('/api/admin/webhooks')).status).toBe(403);
    // A superuser's own personal token: the refusal is about the kind of credential, not the user's rights.
    const token = await admin.post('/api/auth/tokens', { name: 'wh', superuser: true });
    expect(token.status).toBe(201);
    const pat = app.as(token.body.data.token);
    const endpoint = await create('/pat', ['user.deleted']);
    const before = (await admin.get('/api/admin/webhooks')).body.data as unknown[];
    const base = `/api/admin/webhooks/${endpoint.id}`;
    const routes: [string, string, unknown?][] = [
      ['POST', '/api/admin/webhooks', { url: receiver.url('/by-pat'), events: ['*'] }],
      ['GET', base],
      ['PATCH', base, { description: 'by a token', enabled: false }],
      ['DELETE', base],
      ['POST', `${base}/rotate-secret`],
      ['POST', `${base}/test`],
      ['GET', `${base}/deliveries`],
      ['POST', `${base}/deliveries/1/redeliver`],
    ];
    for (const [method, path, body] of routes) {
      const res = await pat.request(method, path, { body });
      expect([method, path, res.status, res.body?.detail?.[0]?.code]).toEqual([
        method,
        path,
        403,
        'access.token_not_allowed',
      ]);
    }
    // No endpoint was created, changed or deleted, no test event queued.
    expect((await admin.get('/api/admin/webhooks')).body.data).toEqual(before);
    expect((await admin.get(base)).body.data).toMatchObject({ description: '/pat', enabled: true });
    expect(await deliveries(endpoint.id)).toEqual([]);
    // The secret was not rotated: a delivery carries one signature, by the secret of the creation.
    expect((await admin.post(`${base}/test`)).status).toBe(202);
    await eventually(() => receiver.at('/pat').length === 1);
    const [got] = receiver.at('/pat');
    const headers = {
      'webhook-id': got!.headers['webhook-id'] as string,
      'webhook-timestamp': got!.headers['webhook-timestamp'] as string,
      'webhook-signature': got!.headers['webhook-signature'] as string,
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(new Webhook(endpoint.secret).verify(got!.body, headers)).toMatchObject({ type: 'webhook.test' });
  });

  it('delivers the test event signed as Standard Webhooks specifies, whatever the endpoint subscribes to', async () => {
    const created = await create('/signed', ['user.deleted']);
    expect((await admin.post(`/api/admin/webhooks/${created.id}/test`)).status).toBe(202);
    await eventually(() => receiver.at('/signed').length === 1);
    const [got] = receiver.at('/signed');
    expect(got!.headers['content-type']).toBe('application/json');
    const verified = new Webhook(created.secret).verify(got!.body, {
      'webhook-id': got!.headers['webhook-id'] as string,
      'webhook-timestamp': got!.headers['webhook-timestamp'] as string,
      'webhook-signature': got!.headers['webhook-signature'] as string,
    });
    expect(verified).toEqual({
      id: got!.headers['webhook-id'],
      type: 'webhook.test',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { webhookId: created.id },
    });
    // A wrong secret does not verify.
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got!.body, {
        'webhook-id': got!.headers['webhook-id'] as string,
        'webhook-timestamp': got!.headers['webhook-timestamp'] as string,
        'webhook-signature': got!.headers['webhook-signature'] as string,
      }),
    ).toThrow();
    const deliveries = await until(
      () => admin.get(`/api/admin/webhooks/${created.id}/deliveries`),
      (res) => res.body.data.items[0]?.status === 'succeeded',
    );
    expect(deliveries.body.data.items[0]).toMatchObject({
      eventId: got!.headers['webhook-id'],
      type: 'webhook.test',
      attempts: 1,
      lastStatusCode: 204,
    });
  });

  it('signs with the new and the previous secret during the rotation overlap (previous listed second)', async () => {
    const created = await create('/rotated', ['user.deleted']);
    const rotated = await admin.post(`/api/admin/webhooks/${created.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const secret = rotated.body.data.secret as string;
    expect(secret).not.toBe(created.secret);
    await admin.post(`/api/admin/webhooks/${created.id}/test`);
    await eventually(() => receiver.at('/rotated').length === 1);
    const [got] = receiver.at('/rotated');
    const headers = {
      'webhook-id': got!.headers['webhook-id'] as string,
      'webhook-timestamp': got!.headers['webhook-timestamp'] as string,
      'webhook-signature': got!.headers['webhook-signature'] as string,
    };
    const signatures = headers['webhook-signature'].split(' ');
    expect(signatures).toHaveLength(2);
    // Each secret verifies the body, and the first signature is the new secret's.
    new Webhook(secret).verify(got!.body, headers);
    new Webhook(created.secret).verify(got!.body, headers);
    new Webhook(secret).verify(got!.body, { ...headers, 'webhook-signature': signatures[0]! });
  });

  it('counts an endpoint’s deliveries exactly up to the bound, then says "more than"', async () => {
    const created = await create('/many', ['user.deleted']);
    // Disabled: the rows below stay as written (nothing is attempted).
    expect((await admin.patch(`/api/admin/webhooks/${created.id}`, { enabled: false })).status).toBe(200);
    const rt = app.app.runtime;
    const { webhookEvent: ev, webhookDelivery: d } = rt.tables.webhooks as unknown as WebhookTables;
    const eventId = randomUUID();
    const at = new Date();
    await rt.authDb.orm.insert(ev).values({ id: eventId, type: 'user.deleted', data: '{}', createdAt: at });
    const rows = Array.from({ length: DELIVERY_TOTAL_COUNT_BOUND + 60 }, () => ({
      eventId,
      endpointId: created.id,
      status: 'succeeded',
      attempts: 1,
      createdAt: at,
      deliveredAt: at,
    }));
    for (let i = 0; i < rows.length; i += 500) await rt.authDb.orm.insert(d).values(rows.slice(i, i + 500));
    const page = async (query: string) =>
      (await admin.get(`/api/admin/webhooks/${created.id}/deliveries?${query}`)).body.data as {
        items: unknown[];
        total: number;
        pages: number;
      };
    expect(await page('pageSize=50')).toMatchObject({ total: DELIVERY_TOTAL_COUNT_BOUND + 1 });
    // Near the end the count reaches it: exact.
    const last = await page(`pageSize=50&page=${Math.ceil((DELIVERY_TOTAL_COUNT_BOUND + 60) / 50)}`);
    expect(last).toMatchObject({ total: DELIVERY_TOTAL_COUNT_BOUND + 60 });
    expect(last.items).toHaveLength(10);
    expect(await page('status=failed')).toMatchObject({ total: 0, items: [] });
  });

  it('redelivers an event with the same webhook-id; the status filter lists by state', async () => {
    const created = await create('/again', ['user.deleted']);
    receiver.answer('/again', 500);
    await admin.post(`/api/admin/webhooks/${created.id}/test`);
    // Schedule '0': two attempts, both answered 500, then failed.
    await eventually(() => receiver.at('/again').length === 2);
    const failed = await until(
      async () => (await admin.get(`/api/admin/webhooks/${created.id}/deliveries?status=failed`)).body.data,
      (page: { items: { id: string }[] }) => page.items.length === 1,
    );
    expect(failed.items[0]).toMatchObject({
      status: 'failed',
      attempts: 2,
      nextAttemptAt: null,
      lastStatusCode: 500,
    });
    receiver.answer('/again', 200);
    const again = await admin.post(
      `/api/admin/webhooks/${created.id}/deliveries/${failed.items[0]!.id}/redeliver`,
    );
    expect(again.status).toBe(202);
    await eventually(() => receiver.at('/again').length === 3);
    const ids = new Set(receiver.at('/again').map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    const unknown = await admin.post(`/api/admin/webhooks/${created.id}/deliveries/999999/redeliver`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail[0]).toMatchObject({
      code: 'webhook.delivery_not_found',
      loc: ['path', 'delivery_id'],
    });
  });

  // SPEC-3 §3 `enabled`: an endpoint that is disabled gets no deliveries.
  it('an endpoint created with enabled false gets no delivery of the events that happen while it is disabled', async () => {
    const off = await create('/off', ['user.updated', 'user.login'], { enabled: false });
    expect(off.enabled).toBe(false);
    await create('/on', ['user.updated', 'user.login']);
    // Two events while it is disabled: a change of a user's profile through the API, and that user's login.
    const person = await app.createUser({ username: 'wr_while_off' });
    const changed = await admin.patch(`/api/admin/user/${person.id}`, { firstName: 'Offline' });
    expect(changed.status).toBe(200);
    await app.loginAs(person);
    // The enabled endpoint with the same subscription got both: the events were recorded.
    const typesAt = (path: string) =>
      receiver
        .at(path)
        .filter((r) => (r.json?.data.userId ?? r.json?.data.id) === person.id)
        .map((r) => r.json.type as string)
        .sort();
    await eventually(() => typesAt('/on').length === 2);
    expect(typesAt('/on')).toEqual(['user.login', 'user.updated']);
    // Deliveries are written with the event (the outbox), so the disabled endpoint's would be there by now.
    expect(await deliveries(off.id)).toEqual([]);
    expect(receiver.at('/off')).toEqual([]);

    // Enabled afterwards: what happened before does not arrive; a new event does.
    const enabled = await admin.patch(`/api/admin/webhooks/${off.id}`, { enabled: true });
    expect(enabled.body.data).toMatchObject({ enabled: true });
    await app.loginAs(person);
    await eventually(() => receiver.at('/off').length === 1);
    await eventually(() => typesAt('/on').length === 3);
    expect(receiver.at('/off').map((r) => r.json.type)).toEqual(['user.login']);
    expect((await deliveries(off.id)).map((d) => d.type)).toEqual(['user.login']);
  });
});
