import { configRow, enrolTotp, mfaToken, passwordLogin } from '../../../../testing/mfa.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';

/** SPEC-2 "Administration and self-service": `DELETE /admin/user/{user_id}/mfa`. */
describeEachDatabase('Admin MFA reset', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;
  beforeAll(async () => {
    app = await startTestApp({ database, settings: { mfa_enabled: true } });
    admin = await app.loginAs(await app.createUser({ username: 'mfa_admin', isSuperuser: true }));
  });
  afterAll(() => app.close());

  it("removes a user's MFA and backup codes: the next login needs the password only", async () => {
    const user = await app.createUser({ username: 'lost_phone' });
    await enrolTotp(app, user);
    await mfaToken(app, user); // a pending challenge
    const res = await admin.delete(`/api/admin/user/${user.id}/mfa`);
    expect(res.status).toBe(204);
    expect(await configRow(app, user.id)).toBeUndefined();
    const login = await passwordLogin(app, user);
    expect(login.status).toBe(200);
    expect(login.body.access_token).toEqual(expect.any(String));
  });

  it('refuses the own account, unknown users and non-superusers', async () => {
    const own = await admin.delete(`/api/admin/user/${admin.user.id}/mfa`);
    expect(own.status).toBe(400);
    expect(own.body.detail[0]).toMatchObject({ code: 'user.cannot_reset_own_mfa' });
    const unknown = await admin.delete('/api/admin/user/00000000-0000-4000-8000-000000000000/mfa');
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail[0]).toMatchObject({ code: 'user.not_found', loc: ['path', 'user_id'] });
    expect((await admin.delete('/api/admin/user/not-a-uuid/mfa')).status).toBe(404);
    const staff = await app.loginAs(await app.createUser({ username: 'mfa_staff', isStaff: true }));
    expect((await staff.delete(`/api/admin/user/${admin.user.id}/mfa`)).status).toBe(403);
  });
});
