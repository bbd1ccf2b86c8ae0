import { eq } from 'drizzle-orm';
import { eventsUrl, openSocket, ticketOf, type TestSocket } from '../../../../testing/events.js';
import { dbOf } from '../../../../testing/mfa.js';
import { defineRouter } from '../kernel/router.js';
import type { OrganizationInvitationMail } from '../kernel/ports.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { organizationMailer } from '../../../../testing/mailer.js';

/** A project router scoped to organizations (SPEC-3 §2 "Organization routes of a project"). */
function projectsRouter() {
  const projects = defineRouter({ prefix: '/projects', name: 'projects', organization: true });
  projects.get('/', {}, (ctx) => ({ organization: ctx.organization, user: ctx.user.username }));
  projects.post('/', { organizationPermissions: ['projects.write'] }, (ctx) => ({
    ok: ctx.organization.slug,
  }));
  const byPath = defineRouter({ prefix: '/org-scoped', name: 'org-scoped' });
  byPath.get('/:orgId/reports', { organizationPermissions: ['reports.read'] }, (ctx) => ({
    id: ctx.organization?.id,
  }));
  byPath.get('/both', { organization: true, permissions: ['global.read'] }, (ctx) => ({
    role: ctx.organization.role,
  }));
  return [projects, byPath];
}

/** SPEC-3 §2 "Organizations" over real HTTP, on both databases. */
describeEachDatabase('Organizations', (database) => {
  let app: TestApp;
  let root: LoggedInClient;
  let owner: LoggedInClient;
  let admin: LoggedInClient;
  let member: LoggedInClient;
  let outsider: LoggedInClient;
  const mails: OrganizationInvitationMail[] = [];
  let orgId = '';

  async function verify(id: string) {
    const { orm, core } = dbOf(app);
    await orm.update(core.user).set({ emailVerifiedAt: new Date() }).where(eq(core.user.id, id));
  }
  async function user(username: string, extra: { isSuperuser?: boolean } = {}) {
    const created = await app.createUser({ username, email: `${username}@example.com`, ...extra });
    await verify(created.id);
    return app.loginAs(created);
  }
  async function invite(by: LoggedInClient, org: string, email: string, role: string) {
    const res = await by.post(`/api/organizations/${org}/invitations`, { email, role });
    expect(res.status).toBe(201);
    const token = new URL(mails.at(-1)!.url).searchParams.get('token')!;
    return { id: res.body.data.id as string, token };
  }

  beforeAll(async () => {
    app = await startTestApp({
      database,
      routers: projectsRouter(),
      organizationRoles: {
        member: ['projects.read'],
        admin: ['projects.read', 'projects.write'],
        billing: ['reports.read'],
      },
      mailer: organizationMailer(mails),
      settings: {
        organizations_enabled: true,
        account_pages_enabled: true,
        self_delete_enabled: true,
        personal_tokens_enabled: true,
        events_broadcast_enabled: true,
        events_allow_query_token: true,
        public_url: 'https://app.example.com',
      },
    });
    root = await user('org_root', { isSuperuser: true });
    owner = await user('org_owner');
    admin = await user('org_admin');
    member = await user('org_member');
    outsider = await user('org_outsider');
    const created = await owner.post('/api/organizations', { name: 'Acme', slug: 'acme' });
    expect(created.status).toBe(201);
    orgId = created.body.data.id;
    // Mails arrive after the response (in the background).
    const a = await owner.post(`/api/organizations/${orgId}/invitations`, {
      email: 'org_admin@example.com',
      role: 'admin',
    });
    expect(a.status).toBe(201);
    await until(() => mails.length === 1);
    expect(
      (await admin.post('/api/organizations/invitations/accept', { token: tokenOf(mails[0]!) })).status,
    ).toBe(200);
    await owner.post(`/api/organizations/${orgId}/invitations`, {
      email: 'org_member@example.com',
      role: 'member',
    });
    await until(() => mails.length === 2);
    expect(
      (await member.post('/api/organizations/invitations/accept', { token: tokenOf(mails[1]!) })).status,
    ).toBe(200);
  });
  afterAll(() => app.close());

  const tokenOf = (mail: OrganizationInvitationMail) => new URL(mail.url).searchParams.get('token')!;
  async function until(check: () => boolean) {
    for (let i = 0; i < 250 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
    if (!check()) throw new Error('timed out waiting');
  }

  it('creates with the caller as owner, refuses a taken or malformed slug, lists own memberships', async () => {
    expect(
      (await owner.post('/api/organizations', { name: 'Other', slug: 'acme' })).body.detail[0].code,
    ).toBe('organization.slug_taken');
    const bad = await owner.post('/api/organizations', { name: 'X', slug: 'No Caps' });
    expect([bad.status, bad.body.detail[0].code]).toEqual([422, 'request.validation_error']);
    const mine = await member.get('/api/organizations');
    expect(mine.body.data).toEqual([expect.objectContaining({ id: orgId, slug: 'acme', role: 'member' })]);
    const detail = await admin.get(`/api/organizations/${orgId}`);
    expect(detail.body.data).toMatchObject({
      role: 'admin',
      permissions: ['projects.read', 'projects.write'],
    });
    const own = await owner.get(`/api/organizations/${orgId}`);
    expect(own.body.data.permissions).toEqual(['projects.read', 'projects.write', 'reports.read']);
    // A superuser who is no member: role null and every declared codename; not in their own list.
    const su = await root.get(`/api/organizations/${orgId}`);
    expect(su.body.data).toMatchObject({
      role: null,
      permissions: ['projects.read', 'projects.write', 'reports.read'],
    });
    expect((await root.get('/api/organizations')).body.data).toEqual([]);
  });

  it('answers 404 organization.not_found, never 403, to non-members on every organization route', async () => {
    const paths: [string, string, unknown?][] = [
      ['GET', `/api/organizations/${orgId}`],
      ['PATCH', `/api/organizations/${orgId}`, { name: 'x' }],
      ['DELETE', `/api/organizations/${orgId}`],
      ['GET', `/api/organizations/${orgId}/members`],
      ['PATCH', `/api/organizations/${orgId}/members/${member.user.id}`, { role: 'admin' }],
      ['DELETE', `/api/organizations/${orgId}/members/${member.user.id}`],
      ['POST', `/api/organizations/${orgId}/invitations`, { email: 'a@example.com', role: 'member' }],
      ['GET', `/api/organizations/${orgId}/invitations`],
      ['GET', '/api/projects'],
      ['GET', `/api/organizations/00000000-0000-4000-8000-000000000000`],
      ['GET', `/api/organizations/not-a-uuid`],
    ];
    for (const [method, path, body] of paths) {
      const res = await outsider.request(method, path, {
        body,
        headers: { 'X-Organization-Id': orgId },
      });
      expect([path, res.status, res.body.detail[0].code]).toEqual([path, 404, 'organization.not_found']);
    }
  });

  it('lets members read, admins manage below owner, and refuses the rest with organization.role_forbidden', async () => {
    const forbidden = async (res: { status: number; body: any }) =>
      expect([res.status, res.body.detail[0].code]).toEqual([403, 'organization.role_forbidden']);
    await forbidden(await member.patch(`/api/organizations/${orgId}`, { name: 'Nope' }));
    await forbidden(await member.get(`/api/organizations/${orgId}/invitations`));
    await forbidden(await admin.delete(`/api/organizations/${orgId}`));
    await forbidden(
      await admin.patch(`/api/organizations/${orgId}/members/${owner.user.id}`, { role: 'member' }),
    );
    await forbidden(
      await admin.patch(`/api/organizations/${orgId}/members/${member.user.id}`, { role: 'owner' }),
    );
    await forbidden(await admin.delete(`/api/organizations/${orgId}/members/${owner.user.id}`));
    await forbidden(
      await admin.post(`/api/organizations/${orgId}/invitations`, { email: 'x@example.com', role: 'owner' }),
    );
    const renamed = await admin.patch(`/api/organizations/${orgId}`, { name: 'Acme Inc' });
    expect(renamed.body.data).toMatchObject({ name: 'Acme Inc', slug: 'acme' });
    const unknown = await admin.patch(`/api/organizations/${orgId}/members/${member.user.id}`, {
      role: 'wizard',
    });
    expect([unknown.status, unknown.body.detail[0].code]).toEqual([422, 'organization.role_invalid']);
    const billing = await admin.patch(`/api/organizations/${orgId}/members/${member.user.id}`, {
      role: 'billing',
    });
    expect(billing.body.data).toMatchObject({ userId: member.user.id, role: 'billing' });
    await admin.patch(`/api/organizations/${orgId}/members/${member.user.id}`, { role: 'member' });
  });

  it('pages and searches members', async () => {
    const page = await member.get(`/api/organizations/${orgId}/members?pageSize=2`);
    expect(page.body.data).toMatchObject({ total: 3, page: 1, pageSize: 2, pages: 2 });
    expect(page.body.data.items[0]).toEqual({
      userId: owner.user.id,
      username: 'org_owner',
      email: 'org_owner@example.com',
      firstName: '',
      lastName: '',
      role: 'owner',
      joinedAt: expect.any(String),
    });
    const found = await member.get(`/api/organizations/${orgId}/members?search=ADMIN`);
    expect(found.body.data.items.map((m: { username: string }) => m.username)).toEqual(['org_admin']);
  });

  it('scopes project routes by header or path, with organization codenames and global permissions', async () => {
    const headers = { 'X-Organization-Id': orgId };
    const none = await member.get('/api/projects');
    expect([none.status, none.body.detail[0].code]).toEqual([400, 'organization.required']);
    const read = await member.get('/api/projects', { headers });
    expect(read.body.data.organization).toEqual({
      id: orgId,
      slug: 'acme',
      role: 'member',
      permissions: ['projects.read'],
    });
    const write = await member.post('/api/projects', {}, { headers });
    expect([write.status, write.body.detail[0]]).toEqual([
      403,
      expect.objectContaining({
        code: 'access.permissions_missing',
        params: { permissions: ['projects.write'] },
      }),
    ]);
    expect((await admin.post('/api/projects', {}, { headers })).body.data).toEqual({ ok: 'acme' });
    expect((await root.post('/api/projects', {}, { headers })).status).toBe(200);
    // The path parameter orgId names it too; a role not listed for a codename lacks it.
    expect((await owner.get(`/api/org-scoped/${orgId}/reports`)).body.data).toEqual({ id: orgId });
    expect((await member.get(`/api/org-scoped/${orgId}/reports`)).status).toBe(403);
    expect((await outsider.get(`/api/org-scoped/${orgId}/reports`)).status).toBe(404);
    // Both kinds apply: a member without the global codename is refused.
    const both = await member.get('/api/org-scoped/both', { headers });
    expect([both.status, both.body.detail[0].params]).toEqual([403, { permissions: ['global.read'] }]);
  });

  it('checks a personal token on organization routes and refuses it on invitations (SPEC-3 §7 rule 3)', async () => {
    const created = await member.post('/api/auth/tokens', { name: 'ci' });
    expect(created.status).toBe(201);
    const pat = app.as(created.body.data.token);
    const headers = { 'X-Organization-Id': orgId };
    expect((await pat.get('/api/projects', { headers })).body.data.organization.role).toBe('member');
    expect((await pat.post('/api/projects', {}, { headers })).status).toBe(403);
    const byAdmin = await admin.post('/api/auth/tokens', { name: 'ci' });
    const adminPat = app.as(byAdmin.body.data.token);
    const refused = await adminPat.post(`/api/organizations/${orgId}/invitations`, {
      email: 'pat@example.com',
      role: 'member',
    });
    expect([refused.status, refused.body.detail[0].code]).toEqual([403, 'access.token_not_allowed']);
    const outsiderPat = app.as((await outsider.post('/api/auth/tokens', { name: 'ci' })).body.data.token);
    expect((await outsiderPat.get('/api/projects', { headers })).status).toBe(404);
  });

  it('invitations: pending list, supersede, revoke, email match, single use, already a member', async () => {
    const first = await invite(admin, orgId, 'org_outsider@example.com', 'member');
    const second = await invite(admin, orgId, 'ORG_OUTSIDER@example.com', 'billing');
    expect(mails.at(-1)).toMatchObject({
      invitedBy: 'org_admin',
      organization: { id: orgId, name: 'Acme Inc', slug: 'acme' },
      role: 'billing',
    });
    expect(mails.at(-1)!.url.startsWith('https://app.example.com/account/join-organization?token=')).toBe(
      true,
    );
    const pending = await admin.get(`/api/organizations/${orgId}/invitations`);
    expect(pending.body.data).toEqual([
      {
        id: second.id,
        email: 'ORG_OUTSIDER@example.com',
        role: 'billing',
        expiresAt: expect.any(String),
        invitedBy: { id: admin.user.id, username: 'org_admin' },
        createdAt: expect.any(String),
      },
    ]);
    const superseded = await outsider.post('/api/organizations/invitations/accept', { token: first.token });
    expect([superseded.status, superseded.body.detail[0].code]).toEqual([
      400,
      'organization.invitation_invalid',
    ]);
    const mismatch = await member.post('/api/organizations/invitations/accept', { token: second.token });
    expect([mismatch.status, mismatch.body.detail[0].code]).toEqual([
      403,
      'organization.invitation_email_mismatch',
    ]);
    const joined = await outsider.post('/api/organizations/invitations/accept', { token: second.token });
    expect(joined.body.data).toMatchObject({ organization: { id: orgId, slug: 'acme' }, role: 'billing' });
    expect(
      (await outsider.post('/api/organizations/invitations/accept', { token: second.token })).status,
    ).toBe(400);
    const again = await admin.post(`/api/organizations/${orgId}/invitations`, {
      email: 'org_outsider@example.com',
      role: 'member',
    });
    expect([again.status, again.body.detail[0].code]).toEqual([409, 'organization.already_member']);
    const revoked = await invite(admin, orgId, 'someone@example.com', 'member');
    expect((await admin.delete(`/api/organizations/${orgId}/invitations/${revoked.id}`)).status).toBe(204);
    expect((await admin.get(`/api/organizations/${orgId}/invitations`)).body.data).toEqual([]);
    expect((await outsider.delete(`/api/organizations/${orgId}/members/${outsider.user.id}`)).status).toBe(
      204,
    );
  });

  it('50 concurrent accepts of one invitation give exactly one member', async () => {
    const racer = await user('org_racer');
    const { token } = await invite(owner, orgId, 'org_racer@example.com', 'member');
    const results = await Promise.all(
      Array.from({ length: 50 }, () => racer.post('/api/organizations/invitations/accept', { token })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400)).toHaveLength(49);
    const members = await owner.get(`/api/organizations/${orgId}/members?search=org_racer`);
    expect(members.body.data.total).toBe(1);
  });

  it('keeps an owner: last-owner rules on demotion, removal, leaving and account deletion', async () => {
    const code = (res: { status: number; body: any }) => [res.status, res.body.detail?.[0]?.code];
    expect(
      code(await owner.patch(`/api/organizations/${orgId}/members/${owner.user.id}`, { role: 'admin' })),
    ).toEqual([400, 'organization.last_owner']);
    expect(code(await owner.delete(`/api/organizations/${orgId}/members/${owner.user.id}`))).toEqual([
      400,
      'organization.last_owner',
    ]);
    expect(code(await root.delete(`/api/admin/user/${owner.user.id}`))).toEqual([
      400,
      'organization.last_owner',
    ]);
    expect(
      code(await owner.request('DELETE', '/api/auth/user', { body: { password: owner.user.password } })),
    ).toEqual([400, 'organization.last_owner']);
    // With a second owner the first may go; a member may leave.
    expect(
      (await owner.patch(`/api/organizations/${orgId}/members/${admin.user.id}`, { role: 'owner' })).status,
    ).toBe(200);
    expect(
      (await owner.patch(`/api/organizations/${orgId}/members/${owner.user.id}`, { role: 'member' })).status,
    ).toBe(200);
    expect(
      (await admin.patch(`/api/organizations/${orgId}/members/${owner.user.id}`, { role: 'owner' })).status,
    ).toBe(200);
    expect((await member.delete(`/api/organizations/${orgId}/members/${member.user.id}`)).status).toBe(204);
    expect((await member.get(`/api/organizations/${orgId}`)).status).toBe(404);
  });

  it('never lets an accepted invitation leave members without an owner', async () => {
    const code = (res: { status: number; body: any }) => [res.status, res.body.detail?.[0]?.code];
    // The owner is the organization's only member, so leaving is allowed (no member is left behind); the
    // invitations sent before stay pending.
    const lone = await user('org_lone_owner');
    const joiner = await user('org_lone_joiner');
    const heir = await user('org_lone_heir');
    const org = (await lone.post('/api/organizations', { name: 'Lone', slug: 'lone-owner' })).body.data.id;
    const asMember = await invite(lone, org, 'org_lone_joiner@example.com', 'member');
    const asOwner = await invite(lone, org, 'org_lone_heir@example.com', 'owner');
    expect((await lone.delete(`/api/organizations/${org}/members/${lone.user.id}`)).status).toBe(204);
    // SPEC-3 §2 "No route leaves an organization that has members without an owner": a member joining an
    // organization with no owner would be such a state. The invitation is void (revoked), as it would be had
    // the organization been deleted.
    expect(
      code(await joiner.post('/api/organizations/invitations/accept', { token: asMember.token })),
    ).toEqual([400, 'organization.invitation_invalid']);
    expect((await root.get(`/api/organizations/${org}/members`)).body.data.total).toBe(0);
    expect((await root.get(`/api/organizations/${org}/invitations`)).body.data).toEqual([
      expect.objectContaining({ id: asOwner.id, role: 'owner' }),
    ]);
    // An owner's invitation gives the organization its owner back; a member may join after it.
    expect((await heir.post('/api/organizations/invitations/accept', { token: asOwner.token })).status).toBe(
      200,
    );
    const again = await invite(heir, org, 'org_lone_joiner@example.com', 'member');
    expect((await joiner.post('/api/organizations/invitations/accept', { token: again.token })).status).toBe(
      200,
    );
  });

  it('an owner leaving while a member accepts: never members without an owner (10 rounds)', async () => {
    const joiner = await user('org_race_joiner');
    for (let round = 0; round < 10; round++) {
      const lone = await user(`org_race_owner_${round}`);
      const org = (await lone.post('/api/organizations', { name: 'Race', slug: `race-${round}` })).body.data
        .id;
      const { token } = await invite(lone, org, 'org_race_joiner@example.com', 'member');
      const [left, accepted] = await Promise.all([
        lone.delete(`/api/organizations/${org}/members/${lone.user.id}`),
        joiner.post('/api/organizations/invitations/accept', { token }),
      ]);
      const members = (await root.get(`/api/organizations/${org}/members`)).body.data.items as {
        role: string;
      }[];
      // Either the owner left first (the invitation is void) or the member joined first (the owner stays).
      const outcome = [left.status, accepted.status, members.map((m) => m.role).sort()];
      expect([
        [204, 400, []],
        [400, 200, ['member', 'owner']],
      ]).toContainEqual(outcome);
    }
  });

  it('refuses an admin the revocation of an invitation with the role owner', async () => {
    // A new admin (the one of beforeAll was made an owner above).
    const deputy = await user('org_deputy');
    const asAdmin = await invite(owner, orgId, 'org_deputy@example.com', 'admin');
    expect(
      (await deputy.post('/api/organizations/invitations/accept', { token: asAdmin.token })).status,
    ).toBe(200);
    const byOwner = await invite(owner, orgId, 'future-owner@example.com', 'owner');
    const refused = await deputy.delete(`/api/organizations/${orgId}/invitations/${byOwner.id}`);
    expect([refused.status, refused.body.detail?.[0]?.code]).toEqual([403, 'organization.role_forbidden']);
    expect((await owner.get(`/api/organizations/${orgId}/invitations`)).body.data).toContainEqual(
      expect.objectContaining({ id: byOwner.id }),
    );
    expect((await owner.delete(`/api/organizations/${orgId}/invitations/${byOwner.id}`)).status).toBe(204);
    // The membership counts of the tests below are of the organization without the deputy.
    expect((await deputy.delete(`/api/organizations/${orgId}/members/${deputy.user.id}`)).status).toBe(204);
  });

  it('emits organization_membership_changed to the member and lists memberships in the export', async () => {
    const socket: TestSocket = await openSocket(eventsUrl(app.url, { ticket: await ticketOf(member) }));
    try {
      const readd = await owner.post(`/api/organizations/${orgId}/invitations`, {
        email: 'org_member@example.com',
        role: 'member',
      });
      expect(readd.status).toBe(201);
      await until(() => mails.at(-1)?.email === 'org_member@example.com');
      await member.post('/api/organizations/invitations/accept', { token: tokenOf(mails.at(-1)!) });
      const frame = await socket.waitFor((f) => f.type === 'organization_membership_changed');
      expect(frame.data).toEqual({ organizationId: orgId, userId: member.user.id, role: 'member' });
    } finally {
      await socket.close();
    }
    const exported = await member.get('/api/auth/user/export');
    expect(exported.status).toBe(200);
    expect((exported.body.data ?? exported.body).organizations).toEqual([
      { id: orgId, slug: 'acme', name: 'Acme Inc', role: 'member', joinedAt: expect.any(String) },
    ]);
  });

  it('admin routes list every organization with memberCount; deletion takes memberships along', async () => {
    const other = await outsider.post('/api/organizations', { name: 'Zeta Labs', slug: 'zeta' });
    const list = await root.get('/api/admin/organizations?search=zeta');
    expect(list.body.data.items).toEqual([
      {
        id: other.body.data.id,
        slug: 'zeta',
        name: 'Zeta Labs',
        createdAt: expect.any(String),
        memberCount: 1,
      },
    ]);
    expect((await outsider.get('/api/admin/organizations')).status).toBe(403);
    expect((await root.get(`/api/admin/organizations/${orgId}`)).body.data.memberCount).toBe(4);
    expect((await root.delete(`/api/admin/organizations/${other.body.data.id}`)).status).toBe(204);
    expect((await outsider.get('/api/organizations')).body.data).toEqual([]);
    expect((await root.get(`/api/admin/organizations/${other.body.data.id}`)).status).toBe(404);
  });

  it('the join page shows the organization and accepts after username and password', async () => {
    const joiner = await user('org_joiner');
    const { token } = await invite(owner, orgId, 'org_joiner@example.com', 'member');
    const page = await fetch(`${app.url}/account/join-organization?token=${token}`);
    const html = await page.text();
    expect([page.status, html.includes('Acme Inc')]).toEqual([200, true]);
    const wrong = await fetch(`${app.url}/account/join-organization`, {
      method: 'POST',
      body: new URLSearchParams({ token, username: 'org_joiner', password: 'wrong-password-123' }),
    });
    expect(wrong.status).toBe(400);
    const ok = await fetch(`${app.url}/account/join-organization`, {
      method: 'POST',
      body: new URLSearchParams({ token, username: 'org_joiner', password: joiner.user.password }),
    });
    expect([ok.status, (await ok.text()).includes('role="status"')]).toEqual([200, true]);
    expect((await joiner.get(`/api/organizations/${orgId}`)).body.data.role).toBe('member');
  });
});
