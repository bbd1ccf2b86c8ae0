import { Writable } from 'node:stream';
import { SettingsSchema } from '../kernel/config/schema.js';
import { createLogger } from '../kernel/log/logger.js';
import type { RequestRecord } from '../kernel/module.js';
import type { Authenticator } from '../kernel/ports.js';
import { createActivityRecorder } from './recorder.js';
import type { NewActivity } from './tables.js';

const ALICE = '13f1a0d0-5c70-4864-aae5-38fcf76ddc7c';

/** The recorder with an authenticator whose token decoding is counted (what rule 3 falls back to). */
function recorderWithCountedPeek() {
  const entries: NewActivity[] = [];
  const peeked: string[] = [];
  const authenticator = {
    peek(token: string) {
      peeked.push(token);
      return token === 'token-of-alice' ? { userId: ALICE } : null;
    },
  } as unknown as Authenticator;
  const recorder = createActivityRecorder({
    settings: SettingsSchema.parse({}),
    enqueue: (entry) => void entries.push(entry),
    authenticator: () => authenticator,
    userSettings: () => undefined,
    events: () => undefined,
    log: createLogger({
      level: 'CRITICAL',
      format: 'text',
      stream: new Writable({ write: (_c, _e, cb) => cb() }),
    }),
  });
  return { recorder, entries, peeked };
}

const write = (extra: Partial<RequestRecord>): RequestRecord => ({
  method: 'POST',
  path: '/api/notes/7/archive',
  status: 200,
  durationMs: 3,
  timestamp: new Date('2026-11-24T10:00:00.000Z'),
  bearerToken: 'token-of-alice',
  ...extra,
});

describe('activity recorder: the actor of a request (SPEC "Activity log recording rules" 3)', () => {
  it("takes the guard's user without decoding the token again (docs/performance.md)", () => {
    const { recorder, entries, peeked } = recorderWithCountedPeek();
    recorder.onRequestEnd(write({ user: { id: ALICE, username: 'alice', isSuperuser: false } }));
    expect(entries).toMatchObject([{ userId: ALICE, username: 'alice', method: 'POST' }]);
    expect(peeked).toEqual([]);
  });

  it('decodes the token when the guard loaded no user, and counts that user as non-superuser', () => {
    const { recorder, entries, peeked } = recorderWithCountedPeek();
    recorder.onRequestEnd(write({ status: 401, user: undefined }));
    recorder.onRequestEnd(write({ status: 404, bearerToken: 'forged', user: undefined }));
    expect(peeked).toEqual(['token-of-alice', 'forged']);
    expect(entries).toMatchObject([
      { userId: ALICE, username: null, statusCode: 401 },
      { userId: null, username: null, statusCode: 404 },
    ]);
  });

  it('records a request without a bearer token as anonymous, whatever user the guard had', async () => {
    const { recorder, entries, peeked } = recorderWithCountedPeek();
    // swagger_noauth: the guard lends the first superuser to a loopback request that sent no token.
    recorder.onRequestEnd(
      write({ bearerToken: null, user: { id: ALICE, username: 'alice', isSuperuser: true } }),
    );
    await recorder.settle();
    expect(entries).toMatchObject([{ userId: null, username: null }]);
    expect(peeked).toEqual([]);
  });
});
