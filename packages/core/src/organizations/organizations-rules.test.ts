import { eq } from 'drizzle-orm';
import { eventsUrl, openSocket, ticketOf, type TestSocket } from '../../../../testing/events.js';
import { dbOf } from '../../../../testing/mfa.js';
import { eventually } from '../../../../testing/smtp.js';
import type { OrganizationInvitationMail } from '../kernel/ports.js';
import {
  describeEachDatabase,
  startTestApp,
  type LoggedInClient,
  type TestApp,
  type TestResponse,
} from '../testing/index.js';
import type { OrganizationTables } from './tables.js';
import { organizationMailer } from '../../../../testing/mailer.js';

/** `[status, first error code]` of an answer. */
const outcome = (res: TestResponse) => [res.status, res.body?.detail?.[0]?.code];

/**
 * SPEC-3 §2: `organization_create: superuser` lets only superusers create organizations ("Who may create one:
 * `any` user or `superuser` only"; `POST /organizations` 403 `organization.create_forbidden`).
 */
describeEachDatabase('Organizations: organization_create superuser', (database) => {
  let app: TestApp;
  let root: LoggedInClient;
  let plain: LoggedInClient;
  beforeAll(async () => {
    app = await startTestApp({
      database,
      settings: { organizations_enabled: true, organization_create: 'superuser' },
    });
    root = await app.loginAs(await app.createUser({ username: 'oc_root', isSuperuser: true }));
    plain = await app.loginAs(await app.createUser({ username: 'oc_plain', email: 'oc_plain@example.com' }));
  });
  afterAll(() => app.close());

  it('refuses a non-superuser with 403 organization.create_forbidden and creates nothing; a superuser creates', async () => {
    const refused = await plain.post('/api/organizations', { name: 'Plain Co', slug: 'plain-co' });
    expect(outcome(refused)).toEqual([403, 'organization.create_forbidden']);
    expect((await plain.get('/api/organizations')).body.data).toEqual([]);
    // Nothing was stored: the slug is still free, and the superuser takes it (as its owner).
    const created = await root.post('/api/organizations', { name: 'Plain Co', slug: 'plain-co' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'Plain Co', slug: 'plain-co' });
    const own = await root.get(`/api/organizations/${created.body.data.id}`);
    expect(own.body.data).toMatchObject({ id: created.body.data.id, role: 'owner' });
    const all = await root.get('/api/admin/organizations?search=plain');
    expect(all.body.data.items).toEqual([expect.objectContaining({ slug: 'plain-co', memberCount: 1 })]);
  });
});

/**
 * SPEC-3 §2 "Organizations": slugs and names, invitations (expiry, verified email) and the
 * `organization_membership_changed` event; SPEC-3 §7 rule 9 for concurrent writes of one slug.
 */
describeEachDatabase('Organizations: slugs, names, invitations and membership events', (database) => {
  let app: TestApp;
  let root: LoggedInClient;
  let owner: LoggedInClient;
  const mails: OrganizationInvitationMail[] = [];

  async function verify(id: string) {
    const { orm, core } = dbOf(app);
    await orm.update(core.user).set({ emailVerifiedAt: new Date() }).where(eq(core.user.id, id));
  }
  async function user(username: string, { verified = true } = {}) {
    const created = await app.createUser({ username, email: `${username}@example.com` });
    if (verified) await verify(created.id);
    return app.loginAs(created);
  }
  async function organization(by: LoggedInClient, slug: string): Promise<string> {
    const res = await by.post('/api/organizations', { name: `Org ${slug}`, slug });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  }
  /** Invites `email`; the token is read from the mail (sent in the background, after the answer). */
  async function invite(by: LoggedInClient, org: string, email: string, role: string) {
    const res = await by.post(`/api/organizations/${org}/invitations`, { email, role });
    expect(res.status).toBe(201);
    const mailOf = () => mails.find((m) => m.email === email && m.organization.id === org && m.role === role);
    await eventually(() => mailOf() !== undefined);
    const mail = mailOf()!;
    mails.splice(mails.indexOf(mail), 1);
    return { body: res.body.data, token: new URL(mail.url).searchParams.get('token')! };
  }
  async function join(client: LoggedInClient, org: string, role: string) {
    const { token } = await invite(owner, org, client.user.email!, role);
    const res = await client.post('/api/organizations/invitations/accept', { token });
    expect(res.status).toBe(200);
  }
  const pendingIds = async (org: string) =>
    ((await owner.get(`/api/organizations/${org}/invitations`)).body.data as { id: string }[]).map(
      (i) => i.id,
    );

  beforeAll(async () => {
    app = await startTestApp({
      database,
      mailer: organizationMailer(mails),
      settings: {
        organizations_enabled: true,
        events_broadcast_enabled: true,
        events_allow_query_token: true,
      },
    });
    root = await app.loginAs(await app.createUser({ username: 'or_root', isSuperuser: true }));
    owner = await user('or_owner');
  });
  afterAll(() => app.close());

  it('PATCH to a slug another organization has answers 409 organization.slug_taken and changes nothing', async () => {
    const first = await organization(owner, 'taken-first');
    const second = await organization(owner, 'taken-second');
    const clash = await owner.patch(`/api/organizations/${second}`, { slug: 'taken-first' });
    expect(outcome(clash)).toEqual([409, 'organization.slug_taken']);
    expect((await owner.get(`/api/organizations/${second}`)).body.data.slug).toBe('taken-second');
    expect((await owner.get(`/api/organizations/${first}`)).body.data.slug).toBe('taken-first');
    // Its own slug is not "taken by another organization".
    const same = await owner.patch(`/api/organizations/${first}`, { slug: 'taken-first', name: 'Renamed' });
    expect(same.status).toBe(200);
    expect(same.body.data).toMatchObject({ slug: 'taken-first', name: 'Renamed' });
  });

  it('12 concurrent creations with one slug: exactly one 201, all others 409 organization.slug_taken (SPEC-3 §7 rule 9)', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        owner.post('/api/organizations', { name: `Racer ${i}`, slug: 'race-create' }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    const others = results.filter((r) => r.status !== 201).map(outcome);
    expect(others).toEqual(Array.from({ length: 11 }, () => [409, 'organization.slug_taken']));
    const listed = await root.get('/api/admin/organizations?search=race-create');
    expect(listed.body.data.items).toEqual([
      expect.objectContaining({ id: created[0]!.body.data.id, slug: 'race-create' }),
    ]);
  });

  it('6 concurrent changes to one slug: exactly one 200, all others 409 organization.slug_taken (SPEC-3 §7 rule 9)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await organization(owner, `race-patch-${i}`));
    const results = await Promise.all(
      ids.map((id) => owner.patch(`/api/organizations/${id}`, { slug: 'race-patched' })),
    );
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    const others = results.filter((r) => r.status !== 200).map(outcome);
    expect(others).toEqual(Array.from({ length: 5 }, () => [409, 'organization.slug_taken']));
    const slugs = await Promise.all(
      ids.map(async (id) => (await owner.get(`/api/organizations/${id}`)).body.data.slug as string),
    );
    expect(slugs.filter((s) => s === 'race-patched')).toHaveLength(1);
    expect(slugs.filter((s) => s.startsWith('race-patch-'))).toHaveLength(5);
  });

  it('refuses a name outside 1 to 100 characters and a slug outside 3 to 50 of a-z, 0-9, - (422); accepts the boundaries', async () => {
    const org = await organization(owner, 'limits');
    const malformed: { name: string; slug: string }[] = [
      { name: '', slug: 'empty-name' },
      { name: 'n'.repeat(101), slug: 'long-name' },
      { name: 'Short slug', slug: 'ab' },
      { name: 'Long slug', slug: 's'.repeat(51) },
      { name: 'Underscore', slug: 'under_score' },
    ];
    for (const body of malformed) {
      const created = await owner.post('/api/organizations', body);
      expect([body, ...outcome(created)]).toEqual([body, 422, 'request.validation_error']);
      // The same value in a change of an existing organization.
      const change = body.name === '' || body.name.length > 100 ? { name: body.name } : { slug: body.slug };
      const patched = await owner.patch(`/api/organizations/${org}`, change);
      expect([change, ...outcome(patched)]).toEqual([change, 422, 'request.validation_error']);
    }
    expect((await owner.get(`/api/organizations/${org}`)).body.data).toMatchObject({
      name: 'Org limits',
      slug: 'limits',
    });

    const longest = await owner.post('/api/organizations', { name: 'n'.repeat(100), slug: 'l'.repeat(50) });
    expect(longest.status).toBe(201);
    expect(longest.body.data).toMatchObject({ name: 'n'.repeat(100), slug: 'l'.repeat(50) });
    const shortest = await owner.post('/api/organizations', { name: 'N', slug: 'a-1' });
    expect(shortest.status).toBe(201);
    expect(shortest.body.data).toMatchObject({ name: 'N', slug: 'a-1' });
    const changed = await owner.patch(`/api/organizations/${org}`, { name: 'm'.repeat(100), slug: 'z9-' });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ name: 'm'.repeat(100), slug: 'z9-' });
  });

  it('an invitation expires 72 hours after its creation by default; once expired it cannot be accepted and is not pending', async () => {
    const org = await organization(owner, 'expiring');
    const invitee = await user('or_late');
    const { body, token } = await invite(owner, org, 'or_late@example.com', 'member');
    // SPEC-3 §2: `organization_invitation_expire_hours` defaults to 72.
    expect(Date.parse(body.expiresAt) - Date.parse(body.createdAt)).toBe(72 * 3_600_000);
    expect(await pendingIds(org)).toEqual([body.id]);
    // The organization tests have no clock helper: the invitation's expiry is set in the past in its row.
    const { organizationInvitation } = app.app.runtime.tables.organizations as unknown as OrganizationTables;
    await app.app.runtime.authDb.orm
      .update(organizationInvitation)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(organizationInvitation.id, body.id));
    const accepted = await invitee.post('/api/organizations/invitations/accept', { token });
    expect(outcome(accepted)).toEqual([400, 'organization.invitation_invalid']);
    expect(await pendingIds(org)).toEqual([]);
    expect((await invitee.get(`/api/organizations/${org}`)).status).toBe(404);
  });

  it('refuses an invitee whose matching email is not verified with 403 organization.invitation_email_mismatch', async () => {
    const org = await organization(owner, 'unverified');
    const invitee = await user('or_unverified', { verified: false });
    const { body, token } = await invite(owner, org, 'or_unverified@example.com', 'member');
    const refused = await invitee.post('/api/organizations/invitations/accept', { token });
    expect(outcome(refused)).toEqual([403, 'organization.invitation_email_mismatch']);
    expect((await invitee.get(`/api/organizations/${org}`)).status).toBe(404);
    // The refusal did not use the invitation up: once the address is verified, the same token works.
    expect(await pendingIds(org)).toEqual([body.id]);
    await verify(invitee.user.id);
    const joined = await invitee.post('/api/organizations/invitations/accept', { token });
    expect(joined.status).toBe(200);
    expect(joined.body.data).toMatchObject({ organization: { id: org }, role: 'member' });
  });

  it('emits organization_membership_changed on a role change (the new role) and on deletion (role null for each member)', async () => {
    const org = await organization(owner, 'events');
    const member = await user('or_member');
    const helper = await user('or_helper');
    await join(member, org, 'member');
    await join(helper, org, 'member');
    const sockets: TestSocket[] = [];
    const open = async (client: LoggedInClient) => {
      const socket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(client) }));
      sockets.push(socket);
      return socket;
    };
    try {
      const [memberSocket, helperSocket, ownerSocket, rootSocket] = [
        await open(member),
        await open(helper),
        await open(owner),
        await open(root),
      ];
      const changeOf = (socket: TestSocket, userId: string, role: string | null) =>
        socket.waitFor(
          (f) =>
            f.type === 'organization_membership_changed' &&
            f.data?.organizationId === org &&
            f.data?.userId === userId &&
            f.data?.role === role,
        );

      const promoted = await owner.patch(`/api/organizations/${org}/members/${member.user.id}`, {
        role: 'admin',
      });
      expect(promoted.status).toBe(200);
      const expected = { organizationId: org, userId: member.user.id, role: 'admin' };
      expect((await changeOf(memberSocket!, member.user.id, 'admin')).data).toEqual(expected);
      // "to that user and superusers".
      expect((await changeOf(rootSocket!, member.user.id, 'admin')).data).toEqual(expected);

      expect((await owner.delete(`/api/organizations/${org}`)).status).toBe(204);
      for (const [socket, who] of [
        [memberSocket!, member],
        [helperSocket!, helper],
        [ownerSocket!, owner],
      ] as const) {
        const frame = await changeOf(socket, who.user.id, null);
        expect(frame.data).toEqual({ organizationId: org, userId: who.user.id, role: null });
        // The superuser gets each member's event too.
        expect((await changeOf(rootSocket!, who.user.id, null)).data).toEqual(frame.data);
      }
      // The member was never told of another member's removal.
      expect(
        memberSocket!.frames.filter(
          (f) => f.type === 'organization_membership_changed' && f.data?.userId !== member.user.id,
        ),
      ).toEqual([]);
    } finally {
      await Promise.all(sockets.map((s) => s.close()));
    }
  });
});
