import { Webhook } from 'standardwebhooks';
import { eventually } from '../../../../testing/smtp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../testing/webhook-receiver.js';
import {
  describeEachDatabase,
  startTestApp,
  type LoggedInClient,
  type TestApp,
  type TestClient,
} from '../testing/index.js';

interface Delivery {
  id: string;
  type: string;
  status: string;
}

/**
 * SPEC-3 §7 rule 3 (a personal token is refused on "every webhook route, reading or writing", 403
 * `access.token_not_allowed`) and SPEC-3 §3 (`enabled`: an endpoint that is disabled gets no deliveries).
 */
describeEachDatabase('Webhooks: personal tokens refused, disabled endpoints', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  let pat: TestClient;
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
    admin = await app.loginAs(await app.createUser({ username: 'wr_admin', isSuperuser: true }));
    // A superuser's own personal token: the refusal is about the kind of credential, not the user's rights.
    const created = await admin.post('/api/auth/tokens', { name: 'wr', superuser: true });
    expect(created.status).toBe(201);
    pat = app.as(created.body.data.token);
  });
  afterAll(async () => {
    await app.close();
    await receiver.close();
  });

  async function create(path: string, events: string[], extra: { enabled?: boolean } = {}) {
    const res = await admin.post('/api/admin/webhooks', { url: receiver.url(path), events, ...extra });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; secret: string; enabled: boolean };
  }
  async function deliveries(id: string): Promise<Delivery[]> {
    const res = await admin.get(`/api/admin/webhooks/${id}/deliveries`);
    expect(res.status).toBe(200);
    return res.body.data.items as Delivery[];
  }

  it('refuses a personal token with 403 access.token_not_allowed on every webhook route, and nothing changes', async () => {
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
    expect((await admin.get(base)).body.data).toMatchObject({ description: '', enabled: true });
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
