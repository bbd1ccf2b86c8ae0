import { useTwoInstances } from '../../../../testing/two-instances.js';

// SPEC-3 §4: demoting or deactivating the superuser ends their impersonation at once, on every host. Two app
// instances on one PostgreSQL database and one Redis stand for two hosts: the change made through A (or by
// the CLI, outside any app) is refused on B at the very next request, by the guard's own single query.
describe('impersonation ended across two app instances (PostgreSQL + Redis)', () => {
  const cluster = useTwoInstances('impersonation across instances', () => ({
    settings: { impersonation_enabled: true },
  }));
  if (!cluster) return;

  it.each([
    ['demoted', { isSuperuser: false }],
    ['deactivated', { isActive: false }],
  ])(
    'refuses the token on B once the superuser is %s through A (401 auth.session_revoked)',
    async (label, change) => {
      const { a, b } = cluster;
      const root = await a.loginAs(await a.createUser({ username: `root-${label}`, isSuperuser: true }));
      const support = await a.createUser({ username: `support-${label}`, isSuperuser: true });
      const target = await a.createUser({ username: `target-${label}` });
      const started = await (
        await b.loginAs(support)
      ).post(`/api/admin/user/${target.id}/impersonate`, {
        reason: 'cluster check',
      });
      expect(started.status).toBe(200);
      const onB = b.as(started.body.access_token);
      expect((await onB.get('/api/auth/user')).body.data.impersonatedBy.id).toBe(support.id);

      expect((await root.patch(`/api/admin/user/${support.id}`, change)).status).toBe(200);
      const res = await onB.get('/api/auth/user');
      expect([res.status, res.body.detail[0].code]).toEqual([401, 'auth.session_revoked']);
    },
  );

  it('refuses the token on A and B when the demotion bypasses both apps (the CLI writes the table)', async () => {
    const { a, b } = cluster;
    const support = await a.createUser({ username: 'support-cli', isSuperuser: true });
    const target = await a.createUser({ username: 'target-cli' });
    const token = (
      await (await a.loginAs(support)).post(`/api/admin/user/${target.id}/impersonate`, { reason: 'x' })
    ).body.access_token as string;
    const { authDb } = a.app.runtime;
    await authDb.exec(`UPDATE svc_user SET is_superuser = false WHERE id = '${support.id}'`);
    for (const app of [a, b]) {
      const res = await app.as(token).get('/api/auth/user');
      expect([res.status, res.body.detail[0].code]).toEqual([401, 'auth.session_revoked']);
    }
  });
});
