import { eq } from 'drizzle-orm';
import { describeEachDatabase, startTestApp, type TestApp } from '@svc/core/testing';
import { defineRouter, type OrganizationInvitationMail } from '@svc/core';
import { dbOf } from '../../../testing/mfa.js';
import { createClient, memoryStorage, SvcApiError, type SvcClient } from './index.js';

// SPEC-3 §2 through @svc/client against a real server: the caller's organizations, one organization's
// members, role changes and invitations, and `fetch(path, { organization })` naming the organization per call.

/** A project route that answers with the organization the request named. */
function whereRouter() {
  const where = defineRouter({ prefix: '/where', name: 'where', organization: true });
  where.get('/', {}, (ctx) => ({ slug: ctx.organization.slug, role: ctx.organization.role }));
  return where;
}

describeEachDatabase('@svc/client organizations', (database) => {
  let app: TestApp;
  const mails: OrganizationInvitationMail[] = [];

  beforeAll(async () => {
    app = await startTestApp({
      database,
      routers: [whereRouter()],
      mailer: {
        sendPasswordReset: () => undefined,
        sendEmailVerification: () => undefined,
        sendInvitation: () => undefined,
        sendOrganizationInvitation: (mail) => void mails.push(mail),
      },
      settings: { organizations_enabled: true },
    });
  });
  afterAll(() => app.close());

  async function clientOf(username: string): Promise<SvcClient & { userId: string }> {
    const user = await app.createUser({ username, email: `${username}@example.com` });
    const { orm, core } = dbOf(app);
    await orm.update(core.user).set({ emailVerifiedAt: new Date() }).where(eq(core.user.id, user.id));
    const client = createClient({ baseUrl: app.url, storage: memoryStorage() });
    await client.login(user.username, user.password);
    return Object.assign(client, { userId: user.id });
  }

  it('lists, invites, accepts, changes roles and scopes fetch by X-Organization-Id', async () => {
    const ann = await clientOf('c_ann');
    const ben = await clientOf('c_ben');
    const first = await ann.createOrganization({ name: 'First', slug: 'c-first' });
    const second = await ann.createOrganization({ name: 'Second', slug: 'c-second' });
    expect((await ann.organizations()).map((o) => [o.slug, o.role])).toEqual([
      ['c-first', 'owner'],
      ['c-second', 'owner'],
    ]);
    const org = ann.organization(first.id);
    expect(await org.get()).toMatchObject({ id: first.id, role: 'owner', permissions: [] });

    const invitation = await org.invite('c_ben@example.com', 'member');
    expect((await org.invitations()).map((i) => i.id)).toEqual([invitation.id]);
    for (let i = 0; i < 250 && mails.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const token = new URL(mails[0]!.url).searchParams.get('token')!;
    expect(await ben.acceptOrganizationInvitation(token)).toMatchObject({ role: 'member' });

    const members = await org.members({ search: 'c_ben' });
    expect(members.items.map((m) => [m.username, m.role])).toEqual([['c_ben', 'member']]);
    expect(await org.setRole(ben.userId, 'admin')).toMatchObject({ role: 'admin' });

    // One request per organization: the same client works in both at once.
    const [inFirst, inSecond] = await Promise.all([
      ann.fetch('/api/where', { organization: first.id }).then((r) => r.json() as Promise<any>),
      ann
        .organization(second.id)
        .fetch('/api/where')
        .then((r) => r.json() as Promise<any>),
    ]);
    expect([inFirst.data.slug, inSecond.data.slug]).toEqual(['c-first', 'c-second']);
    const outside = await ben.fetch('/api/where', { organization: second.id });
    expect(outside.status).toBe(404);

    await org.removeMember(ben.userId);
    const gone = await ben
      .organization(first.id)
      .get()
      .catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(SvcApiError);
    expect((gone as SvcApiError).code).toBe('organization.not_found');
    await ann.organization(second.id).delete();
    expect((await ann.organizations()).map((o) => o.slug)).toEqual(['c-first']);
  });
});
