import { defineModule } from '../kernel/module.js';
import { defineRouter } from '../kernel/router.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';

// SPEC "Permissions and groups": GET /admin/permissions/applications lists the application's routes, core routes
// excluded. It reads the route table compiled once at start-up (kernel/routes.ts), the one the server mounts.
describeEachDatabase('applications listing', (database) => {
  let app: TestApp;
  let admin: LoggedInClient;

  const routerOf = (prefix: string) => {
    const router = defineRouter({ prefix, permissions: [`${prefix.slice(1)}.read`] });
    router.get('/', { summary: `List ${prefix.slice(1)}` }, () => []);
    return router;
  };
  const moduleOf = (name: string) =>
    defineModule({ name, setup: () => ({ routers: [routerOf(`/${name}`)] }) });

  beforeAll(async () => {
    app = await startTestApp({
      database,
      routers: [routerOf('/notes'), routerOf('/hidden')],
      modules: [moduleOf('reports'), moduleOf('archive')],
      // A project router by its name, a project module by its name: both are not mounted, so not listed.
      settings: { disable_routers: ['hidden', 'archive'] },
    });
    admin = await app.loginAs(await app.createUser({ username: 'root', isSuperuser: true }));
  });
  afterAll(() => app.close());

  it("lists the routes of createApp's routers and of project modules as mounted, without core routes", async () => {
    const res = await admin.get('/api/admin/permissions/applications');
    expect(res.status).toBe(200);
    const listed = (res.body.data as { path: string; permissions: string[] }[])
      .map((route) => `${route.path} ${route.permissions.join(',')}`)
      .sort();
    expect(listed).toEqual(['/api/notes/ notes.read', '/api/reports/ reports.read']);
    // Switched off means absent everywhere: the server answers 404 for what the listing leaves out.
    expect((await admin.get('/api/hidden/')).status).toBe(404);
    expect((await admin.get('/api/archive/')).status).toBe(404);
    expect((await admin.get('/api/reports/')).status).toBe(200);
  });
});
