// The example frontend (examples/client-demo, docs/client.md): esbuild builds it with @svc/client bundled, tsc
// accepts its TypeScript, and in Chromium, served by its serve.mjs in front of a real server, it logs a TOTP user
// in through the MFA step, shows the settings form from the UI schema and saves a change, and lists live events.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { createSqliteDatabase, reportSkipped, startTestApp, type TestApp } from '@svc/core/testing';
import { freePort } from '../../testing/cli-process.js';
import { enrolTotp, totpCode } from '../../testing/mfa.js';
import { browserMissingReason, launchBrowser, loopbackContext } from '../browser/browser.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const DEMO = `${REPO}examples/client-demo/`;

/** Builds the example into its dist/ (as `pnpm --filter client-demo build`); what went into app.js. */
async function buildDemo(): Promise<string[]> {
  const { buildDemo: build } = (await import(`${DEMO}build.mjs`)) as {
    buildDemo(): Promise<{ metafile: { inputs: Record<string, unknown> } }>;
  };
  return Object.keys((await build()).metafile.inputs);
}

describe('examples/client-demo', () => {
  it('builds with esbuild, bundling @svc/client, and type-checks', async () => {
    const inputs = await buildDemo();
    expect(inputs).toEqual(expect.arrayContaining(['examples/client-demo/src/main.ts']));
    expect(inputs.some((input) => input.includes('packages/client/'))).toBe(true);
    expect(existsSync(`${DEMO}dist/app.js`) && existsSync(`${DEMO}dist/index.html`)).toBe(true);
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
  describe('examples/client-demo in Chromium', () => {
    const database = createSqliteDatabase();
    let app: TestApp;
    let serve: ChildProcess;
    let url: string;
    let browser: Browser;

    beforeAll(async () => {
      app = await startTestApp({
        database: { dialect: 'sqlite', label: 'sqlite', url: database.url },
        settings: { mfa_enabled: true, events_broadcast_enabled: true },
      });
      await buildDemo();
      const port = await freePort();
      serve = spawn(process.execPath, ['serve.mjs'], {
        cwd: DEMO,
        env: { ...process.env, SVC_URL: app.url, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve) => serve.stdout!.once('data', () => resolve()));
      url = `http://127.0.0.1:${port}`;
      browser = await launchBrowser();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      serve?.kill();
      await app?.close();
      await database.drop();
    });

    it('logs in through the MFA step, saves a setting from the schema form and lists events', async () => {
      const erin = await app.createUser({ username: 'erin', isSuperuser: true });
      const { secret } = await enrolTotp(app, erin);
      const page = await (await loopbackContext(browser)).newPage();
      await page.goto(url);

      await page.fill('#login-form [name=username]', 'erin');
      await page.fill('#login-form [name=password]', erin.password);
      await page.click('#login-form button');
      await page.fill('#mfa-form [name=code]', totpCode(secret, 5)); // wrong: the server's message shows
      await page.click('#mfa-form button');
      await page.locator('#error', { hasText: 'mfa.code_invalid' }).waitFor();
      await page.fill('#mfa-form [name=code]', totpCode(secret, 1));
      await page.click('#mfa-form button');
      await page.locator('#username', { hasText: 'erin' }).waitFor();

      // The form comes from GET /auth/user/settings/schema: a select of the theme's allowed values.
      const theme = page.locator('select[name="appearance.theme"]');
      expect(await theme.locator('option').count()).toBe(3);
      await theme.selectOption(JSON.stringify('dark'));
      // Read back with the page's own access token (erin's login needs the second step).
      const pair = await page.evaluate(() => (globalThis as any).localStorage.getItem('svc.auth') as string);
      const erinApi = app.as(JSON.parse(pair).accessToken);
      let stored: unknown;
      for (let i = 0; i < 100 && stored !== 'dark'; i++) {
        stored = (await erinApi.get('/api/auth/user/settings')).body.data.appearance.theme;
        if (stored !== 'dark') await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(stored).toBe('dark');

      // Superusers get `login` events (SPEC "Event types and audience").
      await page.locator('#events-status', { hasText: 'open' }).waitFor();
      await app.loginAs(await app.createUser({ username: 'frank' }));
      await page.locator('#events li', { hasText: 'login' }).first().waitFor();
    });
  });
}
