import { defineRouter } from '../router.js';
import { describeEachDatabase } from '../../testing/each.js';
import { startTestApp, type TestApp } from '../../testing/test-app.js';

// The server's address opened in a browser leads to the documentation instead of a 404 (docs/cli.md "svc
// serve"); /docs shows the project's routes and says where the core routes are.
async function getManual(app: TestApp, path: string): Promise<{ status: number; location: string | null }> {
  const res = await fetch(`${app.url}${path}`, { redirect: 'manual' });
  await res.arrayBuffer();
  return { status: res.status, location: res.headers.get('location') };
}

function notesRouter() {
  const notes = defineRouter({ prefix: '/notes', public: true });
  notes.get('/', { summary: 'List notes' }, () => []);
  return notes;
}

describeEachDatabase('documentation pointers', (database) => {
  describe('an app without routes of its own', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startTestApp({ database });
    });
    afterAll(() => app.close());

    it('redirects / and /docs to /docs/core, which shows the core routes', async () => {
      expect(await getManual(app, '/')).toEqual({ status: 302, location: '/docs/core' });
      expect(await getManual(app, '/docs')).toEqual({ status: 302, location: '/docs/core' });
      expect(await getManual(app, '/docs/')).toEqual({ status: 302, location: '/docs/core' });
      const core = await app.get('/docs/core');
      expect(core.status).toBe(200);
      expect(core.text).toContain('swagger');
      const document = await app.get('/openapi-core.json');
      expect(document.body.info.description ?? '').not.toContain('[/docs](/docs)');
    });
  });

  describe('an app with its own routes', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startTestApp({
        database,
        routers: [notesRouter()],
        settings: { description: 'Notes API' },
      });
    });
    afterAll(() => app.close());

    it('redirects / to /docs, which shows the project routes and points to /docs/core', async () => {
      expect(await getManual(app, '/')).toEqual({ status: 302, location: '/docs/' });
      expect((await getManual(app, '/docs/')).status).toBe(200);
      const project = await app.get('/openapi.json');
      expect(Object.keys(project.body.paths)).toEqual(['/api/notes/']);
      expect(project.body.info.description).toBe(
        'Notes API\n\nThe core routes (login and tokens, users, groups and permissions, user settings, MFA, health) are documented at [/docs/core](/docs/core).',
      );
      const core = await app.get('/openapi-core.json');
      expect(core.body.info.description).toBe(
        "Notes API\n\nThe project's own routes are documented at [/docs](/docs).",
      );
    });
  });

  describe('with docs_enabled false', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startTestApp({ database, routers: [notesRouter()], settings: { docs_enabled: false } });
    });
    afterAll(() => app.close());

    it('answers / with the uniform 404, as every path without a route (there is no page to point to)', async () => {
      const res = await app.get('/');
      expect(res.status).toBe(404);
      expect(res.body.detail[0].code).toBe('request.not_found');
    });
  });
});
