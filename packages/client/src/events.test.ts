import { WebSocket } from 'ws';
import { describeEachDatabase, startTestApp, type TestApp, type TestUser } from '@svc/core/testing';
import { portOf, tcpRelay, type TcpRelay } from '../../../testing/client.js';
import { eventually } from '../../../testing/mfa.js';
import { createClient, type EventsStatus, type SvcClient, type SvcEvent } from './index.js';

// client.events() against real servers (SPEC "Connection rules"): back-off after 1011 and a dropped
// connection, a new ticket after 4403, a stop with a signed-out signal after 4401.

interface Recorder {
  frames: SvcEvent[];
  statuses: { status: EventsStatus; closeCode?: number }[];
  signedOut: number;
  snapshots(): number;
}

function recorder(): Recorder {
  const frames: SvcEvent[] = [];
  return {
    frames,
    statuses: [],
    signedOut: 0,
    snapshots: () => frames.filter((frame) => frame.type === 'snapshot').length,
  };
}

describeEachDatabase('@svc/client event stream', (database) => {
  let app: TestApp;
  /** The same database, its ticket cache unreachable: redeeming a ticket fails, the socket closes 1011. */
  let broken: TestApp;
  let relay: TcpRelay;
  /** WebSocket handshakes still to send to `broken`. */
  let toBroken = 0;
  let admin: TestUser;

  beforeAll(async () => {
    const settings = { events_broadcast_enabled: true, events_ticket_store: 'cache' as const };
    app = await startTestApp({ database, settings });
    broken = await startTestApp({ database, settings: { ...settings, cache_url: 'redis://127.0.0.1:1' } });
    relay = await tcpRelay((head) => {
      if (/^upgrade: websocket/im.test(head) && toBroken > 0) {
        toBroken -= 1;
        return portOf(broken.url);
      }
      return portOf(app.url);
    });
    admin = await app.createUser({ username: 'admin', isSuperuser: true });
  }, 30_000);
  afterAll(async () => {
    await relay.close();
    await broken.close();
    await app.close();
  });

  async function subscribed(user: TestUser): Promise<{ client: SvcClient; record: Recorder; close(): void }> {
    const client = createClient({ baseUrl: relay.url, WebSocket });
    await client.login(user.username, user.password);
    const record = recorder();
    const subscription = client.events({
      onEvent: (frame) => record.frames.push(frame),
      onStatus: (status, detail) => record.statuses.push({ status, closeCode: detail?.closeCode }),
      onSignedOut: () => (record.signedOut += 1),
      backoff: { initialMs: 20, maxMs: 100 },
    });
    return { client, record, close: () => subscription.close() };
  }

  it('backs off and reconnects after 1011 and after a dropped connection, with a new ticket each time', async () => {
    const root = await app.createUser({ username: 'root', isSuperuser: true });
    toBroken = 1;
    const { record, close } = await subscribed(root);
    await eventually(() => record.snapshots() === 1);
    expect(record.statuses).toContainEqual({ status: 'waiting', closeCode: 1011 });
    expect(toBroken).toBe(0);

    await app.loginAs(admin); // superusers receive `login` (SPEC "Event types and audience")
    await eventually(() => record.frames.some((frame) => frame.type === 'login'));

    relay.cut();
    await eventually(() => record.snapshots() === 2);
    expect(record.statuses).toContainEqual({ status: 'waiting', closeCode: 1006 });
    const logins = record.frames.filter((frame) => frame.type === 'login').length;
    await app.loginAs(admin);
    await eventually(() => record.frames.filter((frame) => frame.type === 'login').length === logins + 1);
    expect(record.signedOut).toBe(0);
    expect(record.frames.some((frame) => frame.type === 'ping')).toBe(false);
    close();
  });

  it('takes a new ticket at once after 4403 (superuser status changed)', async () => {
    const demoted = await app.createUser({ username: 'demoted', isSuperuser: true });
    const { record, close } = await subscribed(demoted);
    await eventually(() => record.snapshots() === 1);
    const adminClient = await app.loginAs(admin);
    expect((await adminClient.patch(`/api/admin/user/${demoted.id}`, { isSuperuser: false })).status).toBe(
      200,
    );
    await eventually(() => record.snapshots() === 2);
    expect(record.statuses.filter((entry) => entry.status === 'waiting')).toEqual([]);
    expect(record.statuses.at(-1)).toEqual({ status: 'open', closeCode: undefined });
    expect(record.signedOut).toBe(0);
    close();
  });

  it('stops with a signed-out signal after 4401 (password changed)', async () => {
    const dave = await app.createUser({ username: 'dave' });
    const { record } = await subscribed(dave);
    await eventually(() => record.snapshots() === 1);
    const adminClient = await app.loginAs(admin);
    const changed = await adminClient.patch(`/api/admin/user/${dave.id}`, {
      password: 'a-new-long-password',
    });
    expect(changed.status).toBe(200);
    await eventually(() => record.signedOut === 1);
    expect(record.statuses.at(-1)).toEqual({ status: 'stopped', closeCode: undefined });
    expect(record.snapshots()).toBe(1);
  });
});
