// The example frontend (examples/client-demo, docs/client.md): esbuild builds it with @svc/client bundled, tsc
// accepts its TypeScript, and in Chromium, served by the demo project itself at /app/ (its `staticFiles`, started as
// `pnpm demo` starts it: init, its notes migration, serve), it logs a TOTP user in through the MFA step against the
// same origin with a cookie session (nothing in storage), shows the settings form from the UI schema and saves a
// change, lists live events, and lets the superuser impersonate a user ("Impersonating frank (end)").
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { createClient, reportSkipped } from '@svc/core/testing';
import { CLI_DIR, freePort, listeningUrl, runCli, spawnCli } from '../../testing/cli-process.js';
import { enrolTotp, totpCode } from '../../testing/mfa.js';
import { browserMissingReason, launchBrowser, loopbackContext } from '../browser/browser.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const DEMO = `${REPO}examples/client-demo/`;

/** Builds the example into its dist/ (as `pnpm --filter client-demo build`); what went into app.js. */
async function buildDemo(outdir?: string): Promise<string[]> {
  const { buildDemo: build } = (await import(`${DEMO}build.mjs`)) as {
    buildDemo(options?: { outdir?: string }): Promise<{ metafile: { inputs: Record<string, unknown> } }>;
  };
  return Object.keys((await build(outdir ? { outdir } : {})).metafile.inputs);
}

describe('examples/client-demo', () => {
  it('builds with esbuild, bundling @svc/client, and type-checks', async () => {
    const inputs = await buildDemo();
    expect(inputs).toEqual(expect.arrayContaining(['examples/client-demo/src/main.ts']));
    expect(inputs.some((input) => input.includes('packages/client/'))).toBe(true);
    for (const file of ['app.js', 'index.html', 'style.css'])
      expect(existsSync(`${DEMO}dist/${file}`)).toBe(true);
    // The example's types come from @svc/client's declarations (dist/), as a project's would.
    if (!existsSync(`${REPO}packages/client/dist/index.d.ts`))
      spawnSync(process.execPath, [`${REPO}node_modules/typescript/bin/tsc`, '-b', 'packages/client'], {
        cwd: REPO,
      });
    const tsc = spawnSync(
      process.execPath,
      [`${REPO}node_modules/typescript/bin/tsc`, '-p', 'examples/client-demo/tsconfig.json'],
      { cwd: REPO, encoding: 'utf8' },
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  }, 60_000);
});

const missing = browserMissingReason();
if (missing) {
  describe('examples/client-demo in Chromium', () =>
    reportSkipped('examples/client-demo in Chromium', missing));
} else {
  describe('examples/client-demo in Chromium, served by the demo at /app/', () => {
    // A copy of examples/demo beside a built examples/client-demo/dist, as in the repository: the demo serves
    // `../client-demo/dist`. Inside packages/cli so that the copy's imports resolve (as test/demo/demo.test.ts).
    const root = join(CLI_DIR, '.tmp-test', `client-demo-${randomBytes(5).toString('hex')}`);
    const dir = join(root, 'demo');
    const admin = { username: 'admin', password: 'demo-admin-password' }; // examples/demo/package.json
    let server: ChildProcessWithoutNullStreams | undefined;
    let url: string;
    let browser: Browser;

    beforeAll(async () => {
      mkdirSync(root, { recursive: true });
      cpSync(fileURLToPath(new URL('../../examples/demo/', import.meta.url)), dir, {
        recursive: true,
        filter: (source) => !/node_modules|\.env$|\.db(-shm|-wal)?$/.test(source),
      });
      await buildDemo(join(root, 'client-demo', 'dist'));
      // The demo's start script: init with the demo admin, the notes migration, serve (its svc.yaml turns on
      // MFA and the event stream).
      for (const args of [
        ['init', '--username', admin.username, '--password', admin.password],
        ['migrations', 'upgrade', '--target-name', 'notes'],
      ]) {
        const result = await runCli(args, { cwd: dir });
        if (result.code !== 0) throw new Error(`svc ${args[0]} failed: ${result.stderr}`);
      }
      server = spawnCli(['serve', '--port', String(await freePort()), '--log-level', 'warning'], {
        cwd: dir,
      });
      server.stdin.end();
      url = await listeningUrl(server);
      browser = await launchBrowser();
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      if (server && server.exitCode === null && server.signalCode === null) {
        const stopped = new Promise((resolve) => server!.once('exit', resolve));
        server.kill('SIGTERM');
        await stopped;
      }
      rmSync(root, { recursive: true, force: true });
    }, 30_000);

    it('logs in through the MFA step with a cookie session, saves a setting, lists events, impersonates', async () => {
      // The demo admin with TOTP, so that the page's login takes the MFA step.
      const api = createClient(url);
      const { secret } = await enrolTotp(
        {
          async loginAs(user) {
            const res = await api.post('/api/auth/token', undefined, { form: user });
            return createClient(url, res.body.access_token as string);
          },
        },
        admin,
      );
      const context = await loopbackContext(browser);
      const page = await context.newPage();
      const refused: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
      });
      await page.goto(`${url}/app/`);

      await page.fill('#login-form [name=username]', admin.username);
      await page.fill('#login-form [name=password]', admin.password);
      await page.click('#login-form button');
      await page.fill('#mfa-form [name=code]', totpCode(secret, 5)); // wrong: the server's message shows
      await page.click('#mfa-form button');
      await page.locator('#error', { hasText: 'mfa.code_invalid' }).waitFor();
      await page.fill('#mfa-form [name=code]', totpCode(secret, 1));
      await page.click('#mfa-form button');
      await page.locator('#username', { hasText: admin.username }).waitFor();
      // The page's stylesheet applies under the demo's CSP (no inline style): [hidden] forms are not displayed.
      expect(await page.locator('#login-form').isVisible()).toBe(false);

      // The form comes from GET /auth/user/settings/schema: a select of the theme's allowed values.
      const theme = page.locator('select[name="appearance.theme"]');
      await theme.waitFor(); // the form renders after the user's name shows: count() alone does not wait
      expect(await theme.locator('option').count()).toBe(3);
      await theme.selectOption(JSON.stringify('dark'));
      // The page is in cookie mode (docs/browser-sessions.md): the session is in HttpOnly cookies and the
      // page's storage holds nothing. Read back with the page's own session cookie.
      expect(
        await page.evaluate(() => [
          (globalThis as any).localStorage.length,
          (globalThis as any).sessionStorage.length,
        ]),
      ).toEqual([0, 0]);
      // `__Host-svc_session` when the server makes its cookies Secure (SPEC-3 section 5), else `svc_session`.
      const sessionCookie = (await context.cookies()).find((cookie) =>
        /^(__Host-)?svc_session$/.test(cookie.name),
      )!;
      expect(sessionCookie.httpOnly).toBe(true);
      const cookie = { cookie: `${sessionCookie.name}=${sessionCookie.value}` };
      let stored: unknown;
      for (let i = 0; i < 100 && stored !== 'dark'; i++) {
        stored = (await api.get('/api/auth/user/settings', { headers: cookie })).body.data.appearance.theme;
        if (stored !== 'dark') await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(stored).toBe('dark');

      // Superusers get `login` events (SPEC "Event types and audience"): frank registers (the demo allows it)
      // and logs in.
      await page.locator('#events-status', { hasText: 'open' }).waitFor();
      const frank = { username: 'frank', password: 'frank-password-1234' };
      expect((await api.post('/api/auth/register', frank)).status).toBe(201);
      expect((await api.post('/api/auth/token', undefined, { form: frank })).status).toBe(200);
      await page.locator('#events li', { hasText: 'login' }).first().waitFor();

      // The superuser impersonates frank (SPEC-3 section 4, the demo's `impersonation_enabled`): the page
      // works as frank and says so; "end" logs that session out and returns to the admin's own.
      // Closes of the streams opened from here on reach the page a second late (see "end" below).
      await page.routeWebSocket(/\/api\/core\/events\/ws/, (socket) => {
        const server = socket.connectToServer();
        server.onClose((code, reason) => {
          setTimeout(() => void socket.close({ code, reason }), 1000);
        });
      });
      await page.fill('#impersonate-form [name=username]', frank.username);
      await page.fill('#impersonate-form [name=reason]', 'checking what frank sees');
      await page.click('#impersonate-form button');
      await page.locator('#impersonating', { hasText: 'Impersonating frank' }).waitFor();
      expect((await page.locator('#impersonating').innerText()).replace(/\s+/g, ' ').trim()).toBe(
        'Impersonating frank (end)',
      );
      expect(await page.locator('#username').textContent()).toBe('frank');
      // "end" logs the impersonation's session out, which closes its event stream with 4401 (signed out).
      // On a loaded machine that close may reach the page while it is already showing the admin again: here
      // it is held back a second (the route above) while the settings form's schema takes three, so it
      // arrives mid-way. It must not be taken for the admin's own sign-out.
      let schemaServed!: () => void;
      const served = new Promise<void>((resolve) => (schemaServed = resolve));
      await page.route('**/api/auth/user/settings/schema**', async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 3000));
        await route.continue();
        schemaServed();
      });
      await page.click('#end-impersonation');
      await page.locator('#username', { hasText: admin.username }).waitFor();
      expect(await page.locator('#impersonating').isVisible()).toBe(false);
      // The page has finished returning (the admin's own stream is open again) and still shows the admin.
      await served;
      await page.locator('#events-status', { hasText: 'open' }).waitFor({ state: 'attached' });
      expect(await page.locator('#app').isVisible()).toBe(true);
      expect(await page.locator('#username').textContent()).toBe(admin.username);
      // Frank's session list no longer holds the impersonation session: "end" logged it out.
      const frankApi = createClient(
        url,
        (await api.post('/api/auth/token', undefined, { form: frank })).body.access_token as string,
      );
      // The last request closes the connection the two above shared: afterAll's SIGTERM then has no idle
      // keep-alive connection to wait for (docs/deployment.md: a stop waits up to about 5.5 s for those).
      const sessions = (await frankApi.get('/api/auth/sessions', { headers: { connection: 'close' } })).body
        .data as { impersonatedBy?: unknown }[];
      expect(sessions.filter((item) => item.impersonatedBy)).toEqual([]);
      expect(refused).toEqual([]);
    });
  });
}
