import { Session } from 'node:inspector/promises';
import { describeEachDatabase, startTestApp, type TestApp, type TestClient } from '../testing/index.js';
import { eventsUrl, openSocket, ticketOf, type Frame, type TestSocket } from '../../../../testing/events.js';

const is = (type: string) => (frame: Frame) => frame.type === type;

/**
 * How many `URLSearchParams` in this process still hold one of `tickets`. V8's query of live objects collects
 * garbage first, so only reachable ones are counted.
 */
async function liveQueriesHolding(tickets: string[]): Promise<number> {
  const session = new Session();
  session.connect();
  try {
    const { result: prototype } = await session.post('Runtime.evaluate', {
      expression: 'URLSearchParams.prototype',
    });
    const { objects } = await session.post('Runtime.queryObjects', {
      prototypeObjectId: prototype.objectId!,
    });
    const { result } = await session.post('Runtime.callFunctionOn', {
      objectId: objects.objectId!,
      functionDeclaration:
        'function (tickets) { return this.filter((q) => tickets.includes(q.get("ticket"))).length; }',
      arguments: [{ value: tickets }],
      returnByValue: true,
    });
    return result.value as number;
  } finally {
    session.disconnect();
  }
}

// docs/performance.md "Benchmark suite" (idle socket <= 16 KiB of heap): an open socket keeps its connection state,
// not what its handshake carried. The handshake URL (its ticket, parsed) was held by listener closures for the
// socket's whole life, about 0.4 KiB of each idle socket's 5.
describeEachDatabase('event socket memory', (database) => {
  let app: TestApp;
  let client: TestClient;
  const sockets: TestSocket[] = [];

  beforeAll(async () => {
    app = await startTestApp({ database, settings: { events_broadcast_enabled: true } });
    client = await app.loginAs(await app.createUser({ username: 'idle' }));
  });
  afterAll(async () => {
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
    await app.close();
  });

  it('an open socket no longer holds its handshake query (the ticket)', async () => {
    const tickets = [await ticketOf(client), await ticketOf(client), await ticketOf(client)];
    for (const ticket of tickets) sockets.push(await openSocket(eventsUrl(app.url, { ticket })));
    // The snapshot frame is sent once the server has finished opening the socket.
    for (const socket of sockets) await socket.waitFor(is('snapshot'));
    expect(sockets.every((socket) => socket.ws.readyState === socket.ws.OPEN)).toBe(true);
    expect(await liveQueriesHolding(tickets)).toBe(0);
  }, 120_000); // the heap walk takes as long as the worker's heap is large, whatever ran in it before
});
