import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';

// docs/admin-console.md "Which features are on": the console reads this instead of trying write routes.
describeEachDatabase('GET /admin/features', (database) => {
  let on: TestApp;
  let off: TestApp;
  let rootOn: LoggedInClient;
  let rootOff: LoggedInClient;
  beforeAll(async () => {
    on = await startTestApp({
      database,
      settings: {
        activity_log_enabled: true,
        activity_log_sync: true,
        organizations_enabled: true,
        webhooks_enabled: true,
        impersonation_enabled: true,
        passkeys_enabled: true,
        mfa_enabled: true,
      },
    });
    rootOn = await on.loginAs(await on.createUser({ username: 'feat_root', isSuperuser: true }));
    off = await startTestApp({
      database,
      settings: {
        activity_log_enabled: false,
        organizations_enabled: false,
        webhooks_enabled: false,
        impersonation_enabled: false,
        passkeys_enabled: false,
        mfa_enabled: false,
        disable_core_routers: ['permissions', 'mfa-admin'],
      },
    });
    rootOff = await off.loginAs(await off.createUser({ username: 'feat_root_off', isSuperuser: true }));
  });
  afterAll(async () => {
    await on.close();
    await off.close();
  });

  it('says true for each feature whose admin routes are mounted', async () => {
    const res = await rootOn.get('/api/admin/features');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      activity: true,
      permissions: true,
      organizations: true,
      userOrganizations: true,
      webhooks: true,
      mfaReset: true,
      impersonation: true,
      passkeys: true,
    });
  });

  it('says false for features switched off, by their setting or by disable_core_routers', async () => {
    const res = await rootOff.get('/api/admin/features');
    expect(res.status).toBe(200);
    expect(Object.values(res.body.data)).toEqual(Object.values(res.body.data).map(() => false));
    expect(Object.keys(res.body.data)).toHaveLength(8);
  });

  it('answers 403 access.superuser_required to other users, and writes no activity entry', async () => {
    const user = await on.loginAs(await on.createUser({ username: 'feat_user' }));
    const res = await user.get('/api/admin/features');
    expect(res.status).toBe(403);
    expect(res.body.detail[0]).toMatchObject({ code: 'access.superuser_required' });
    const log = await rootOn.get('/api/admin/audit/logs?pathContains=features');
    expect(log.status).toBe(200);
    expect(log.body.data.total).toBe(0);
  });
});
