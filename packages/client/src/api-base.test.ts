import { WebSocket } from 'ws';
import { describeEachDatabase, startTestApp, type TestApp, type TestUser } from '@svc/core/testing';
import { eventually } from '../../../testing/mfa.js';
import { createClient, SvcApiError, type SvcEvent } from './index.js';

// docs/client.md `apiBase`: against a server with `api_v1_prefix` (SPEC "Settings": a further prefix of every API
// route), the client's own requests, `fetch`, the typed `api`, the refresh and the event stream's ticket and
// socket all go under `/api/v1`, while callers keep writing `/api/...`.

describeEachDatabase('@svc/client under api_v1_prefix', (database) => {
  let app: TestApp;
  let alice: TestUser;

  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { api_v1_prefix: 'v1', events_broadcast_enabled: true, events_ticket_store: 'cache' },
    });
    alice = await app.createUser({ username: 'alice', isSuperuser: true });
  });
  afterAll(() => app.close());

  it('sends every request under the API base', async () => {
    const client = createClient({ baseUrl: app.url, apiBase: '/api/v1', WebSocket });
    const step = await client.login(alice.username, alice.password);
    expect(step.status).toBe('signed-in');
    expect((await client.user()).username).toBe('alice');
    expect((await client.fetch('/api/auth/user')).status).toBe(200);
    const typed = await client.api.GET('/api/admin/permissions/groups');
    expect(typed.response.status).toBe(200);
    // A POST with a body moved under the base keeps its body.
    const made = await client.fetch('/api/admin/permissions/groups', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'under-v1' }),
    });
    expect(made.status).toBe(201);
    // The event stream: its ticket and its socket.
    const frames: SvcEvent[] = [];
    const subscription = client.events({ onEvent: (frame) => frames.push(frame) });
    try {
      await eventually(() => frames.some((frame) => frame.type === 'snapshot'));
    } finally {
      subscription.close();
    }
    await client.logout();
    expect(client.signedIn).toBe(false);
  });

  it('answers 404 to a client that does not know the base (the prefix is really in effect)', async () => {
    const client = createClient({ baseUrl: app.url, WebSocket });
    const error = await client.login(alice.username, alice.password).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(SvcApiError);
    expect((error as SvcApiError).status).toBe(404);
  });
});
