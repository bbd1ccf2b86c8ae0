import { useTwoInstances } from '../../../../testing/two-instances.js';
import { defineRouter } from '../kernel/router.js';
import type { OrganizationTables } from './tables.js';

/** A project route scoped to an organization (SPEC-3 §2). */
function reportsRouter() {
  const reports = defineRouter({ prefix: '/reports', name: 'reports', organization: true });
  reports.get('/', { organizationPermissions: ['reports.read'] }, (ctx) => ({ org: ctx.organization.slug }));
  return reports;
}

// SPEC-3 §2: each request names its organization and the guard reads the membership in its own query, so a
// membership removed on one instance is refused on another at the very next request. Two app instances on one
// PostgreSQL database and one Redis stand for two hosts.
describe('organization membership across two app instances (PostgreSQL + Redis)', () => {
  const cluster = useTwoInstances('organizations across instances', () => ({
    routers: [reportsRouter()],
    organizationRoles: { member: ['reports.read'] },
    settings: { organizations_enabled: true },
  }));
  if (!cluster) return;

  it('a member removed on A is refused on B at once (404), and a demotion there too (403)', async () => {
    const { a, b } = cluster;
    const owner = await a.loginAs(await a.createUser({ username: 'boss' }));
    const worker = await a.createUser({ username: 'worker' });
    const other = await a.createUser({ username: 'other' });
    const org = (await owner.post('/api/organizations', { name: 'Two Hosts', slug: 'two-hosts' })).body.data;
    // Added directly (the invitation flow is tested elsewhere); the database is the one both instances share.
    const { organizationMember } = a.app.runtime.tables.organizations as unknown as OrganizationTables;
    await a.app.runtime.authDb.orm.insert(organizationMember).values([
      { organizationId: org.id, userId: worker.id, role: 'member', joinedAt: new Date() },
      { organizationId: org.id, userId: other.id, role: 'member', joinedAt: new Date() },
    ]);
    const onB = await b.loginAs(worker);
    const otherOnB = await b.loginAs(other);
    const headers = { 'X-Organization-Id': org.id };
    // Warm B: the member has been admitted there.
    expect((await onB.get('/api/reports', { headers })).body.data).toEqual({ org: 'two-hosts' });
    expect((await otherOnB.get('/api/reports', { headers })).status).toBe(200);

    expect((await owner.delete(`/api/organizations/${org.id}/members/${worker.id}`)).status).toBe(204);
    const refused = await onB.get('/api/reports', { headers });
    expect([refused.status, refused.body.detail[0].code]).toEqual([404, 'organization.not_found']);

    expect(
      (await owner.patch(`/api/organizations/${org.id}/members/${other.id}`, { role: 'admin' })).status,
    ).toBe(200);
    const demoted = await otherOnB.get('/api/reports', { headers });
    expect([demoted.status, demoted.body.detail[0].code]).toEqual([403, 'access.permissions_missing']);
  });
});
