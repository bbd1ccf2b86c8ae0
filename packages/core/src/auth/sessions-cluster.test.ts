import jwt from 'jsonwebtoken';
import { eventsUrl, openSocket, ticketOf, type TestSocket } from '../../../../testing/events.js';
import { useTwoInstances } from '../../../../testing/two-instances.js';

const sidOf = (accessToken: string) => (jwt.decode(accessToken) as { sid: string }).sid;

// SPEC-2 "Sessions": revocation is immediate on every worker and host. Two app instances on one PostgreSQL
// database and one Redis stand for two hosts: what is ended on A is refused on B at the very next request.
describe('session revocation across two app instances (PostgreSQL + Redis)', () => {
  const sockets: TestSocket[] = [];
  afterAll(() => Promise.all(sockets.map((socket) => socket.close())));
  const cluster = useTwoInstances('session revocation across instances', () => ({
    settings: { events_broadcast_enabled: true },
  }));
  if (!cluster) return;

  it('a session ended on A refuses its access token on B at once and closes its sockets on B (4401)', async () => {
    const { a, b } = cluster;
    const user = await a.createUser({ username: 'nomad' });
    const phone = await b.loginAs(user);
    const laptop = await b.loginAs(user);
    // Warm B: the token has been accepted there, so a cache of any kind would now hold it.
    expect((await phone.get('/api/auth/user')).status).toBe(200);
    const onPhone = await openSocket(eventsUrl(b.url, { ticket: await ticketOf(phone) }));
    const onLaptop = await openSocket(eventsUrl(b.url, { ticket: await ticketOf(laptop) }));
    sockets.push(onPhone, onLaptop);
    await Promise.all([onPhone, onLaptop].map((s) => s.waitFor((f) => f.type === 'snapshot')));

    const onA = a.as(laptop.accessToken);
    expect((await onA.delete(`/api/auth/sessions/${sidOf(phone.accessToken)}`)).status).toBe(204);

    const refused = await phone.get('/api/auth/user');
    expect(refused.status).toBe(401);
    expect(refused.body.detail[0].code).toBe('auth.session_revoked');
    const refresh = await b.post('/api/auth/refresh-token', { refresh_token: phone.refreshToken });
    expect(refresh.status).toBe(401);
    expect(refresh.body.detail[0].code).toBe('auth.refresh_token_revoked');
    expect(await onPhone.closed).toBe(4401);
    // The other session, and its socket, are untouched; it hears of the ended one.
    expect((await laptop.get('/api/auth/user')).status).toBe(200);
    const notice = await onLaptop.waitFor((f) => f.type === 'session_revoked');
    expect(notice.data).toEqual({ userId: user.id, sessionId: sidOf(phone.accessToken) });
    expect(onLaptop.ws.readyState).toBe(onLaptop.ws.OPEN);
  });
});
