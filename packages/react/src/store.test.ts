import { WebSocket } from 'ws';
import { describeEachDatabase, startTestApp, type TestApp, type TestUser } from '@svc/core/testing';
import { createClient, memoryStorage, SvcApiError } from '@svc/client';
import { enrolTotp, totpCode } from '../../../testing/mfa.js';
import { SessionStore } from './store.js';

// The store behind @svc/react's hooks (docs/react.md "How it works"), on Node against a real server with a
// bearer client: sign-in and its refusal, the MFA step, the user read again when the event stream says the
// permissions changed, sign-out, organizations refused with the server's code. The hooks over it, in three
// browser tabs with the cookie mode, are test/browser/react-tabs.test.ts.

/** Waits until `predicate` holds (an event's delivery, a read in the background), at most ten seconds. */
async function eventually(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !predicate(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!predicate()) throw new Error('condition not reached in time');
}

describeEachDatabase('@svc/react session store', (database) => {
  let app: TestApp;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ database, settings: { mfa_enabled: true, events_broadcast_enabled: true } });
    alice = await app.createUser({ username: 'alice' });
    bob = await app.createUser({ username: 'bob' });
  });
  afterAll(async () => {
    await app.close();
  });

  /** A store over a new bearer client, started (as the provider's effect does), with its snapshots recorded. */
  function startedStore() {
    const client = createClient({ baseUrl: app.url, storage: memoryStorage(), WebSocket });
    const store = new SessionStore(client);
    const statuses: string[] = [];
    store.subscribe(() => statuses.push(store.getSnapshot().status));
    const stop = store.start();
    return { client, store, statuses, stop };
  }

  it('signs in, keeps a refused sign-in in error, and signs out', async () => {
    const { store, statuses, stop } = startedStore();
    expect(store.getSnapshot()).toEqual({ status: 'signed-out', user: null, error: null });

    const refused = await store.signIn('alice', 'wrong-password').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SvcApiError);
    expect((refused as SvcApiError).code).toBe('auth.invalid_credentials');
    expect(store.getSnapshot().status).toBe('signed-out');
    expect((store.getSnapshot().error as SvcApiError).code).toBe('auth.invalid_credentials');

    expect(await store.signIn(alice.username, alice.password)).toBe('signed-in');
    expect(store.getSnapshot()).toMatchObject({
      status: 'signed-in',
      user: { id: alice.id, username: 'alice', permissions: [] },
      error: null,
    });
    // Snapshots are replaced, never changed in place (useSyncExternalStore compares them by identity).
    const before = store.getSnapshot();
    await store.refresh();
    expect(store.getSnapshot()).not.toBe(before);
    expect(Object.isFrozen(store.getSnapshot())).toBe(true);

    await store.signOut();
    expect(store.getSnapshot()).toEqual({ status: 'signed-out', user: null, error: null });
    expect(statuses).toContain('signed-in');
    stop();
  });

  it('takes the MFA step: a wrong code stays in the step, the right one signs in', async () => {
    const { secret } = await enrolTotp(app, bob);
    const { store, stop } = startedStore();
    expect(await store.signIn(bob.username, bob.password)).toBe('mfa-required');
    expect(store.getSnapshot()).toMatchObject({ status: 'mfa-required', user: null });

    const wrong = await store.verifyMfa(totpCode(secret, 5)).catch((error: unknown) => error);
    expect((wrong as SvcApiError).code).toBe('mfa.code_invalid');
    expect(store.getSnapshot().status).toBe('mfa-required');

    expect(await store.verifyMfa(totpCode(secret, 1))).toBe('signed-in');
    expect(store.getSnapshot()).toMatchObject({
      status: 'signed-in',
      user: { username: 'bob' },
      error: null,
    });
    await store.signOut();

    // A step given up goes back to the password form.
    expect(await store.signIn(bob.username, bob.password)).toBe('mfa-required');
    store.cancelMfa();
    expect(store.getSnapshot().status).toBe('signed-out');
    await expect(store.verifyMfa('123456')).rejects.toThrow('no sign-in is waiting');
    stop();
  });

  it('reads the user again when the event stream says their permissions changed', async () => {
    const { store, stop } = startedStore();
    const heard: string[] = [];
    store.addEventHandler(null, (event) => heard.push(event.type));
    await store.signIn(alice.username, alice.password);
    await eventually(() => heard.includes('snapshot')); // the stream is open

    const root = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
    const created = await root.post('/api/admin/permissions/permissions', {
      codename: 'notes.edit',
      description: 'Edit notes',
    });
    expect(created.status).toBe(201);
    const granted = await root.put(`/api/admin/permissions/users/${alice.id}/permissions`, {
      permissionIds: [created.body.data.id],
    });
    expect(granted.status).toBe(200);

    await eventually(() => store.getSnapshot().user?.permissions.includes('notes.edit') === true);
    expect(heard).toContain('user_permissions_changed');
    await store.signOut();
    stop();
  });

  it('answers an organization the caller cannot see with the refusal of the server', async () => {
    const { store, stop } = startedStore();
    await store.signIn(alice.username, alice.password);
    const seen: string[] = [];
    const id = '00000000-0000-4000-8000-000000000000';
    const unsubscribe = store.subscribeOrganization(id, () =>
      seen.push(store.organizationSnapshot(id).status),
    );
    expect(store.organizationSnapshot(id).status).toBe('loading');
    await eventually(() => seen.includes('error'));
    const { error, organization } = store.organizationSnapshot(id);
    expect(organization).toBeNull();
    expect(error).toBeInstanceOf(SvcApiError);
    expect((error as SvcApiError).status).toBe(404);
    unsubscribe();
    await store.signOut();
    stop();
  });
});
