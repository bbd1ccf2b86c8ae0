// The example frontend's organizations panel (examples/client-demo/src/organizations.ts, docs/organizations.md
// "The frontend side") in Chromium: two tabs of one signed-in browser work in two organizations at once. Each
// tab keeps its choice to itself (sessionStorage) and names its organization on every request, so neither ever
// shows the other's organization or members, also after a reload and after switching back and forth.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createSqliteDatabase, startTestApp, type TestApp } from '@svc/core/testing';
import { freePort } from '../../testing/cli-process.js';
import { countingServer, type CountingServer } from '../../testing/client.js';
import { describeInChromium, launchBrowser, loopbackContext } from './browser.js';

const DEMO = new URL('../../examples/client-demo/', import.meta.url).pathname;

describeInChromium('example frontend: two tabs in two organizations', () => {
  const sqlite = createSqliteDatabase();
  const out = mkdtempSync(join(tmpdir(), 'svc-org-tabs-'));
  let app: TestApp;
  let server: CountingServer;
  let browser: Browser;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const { buildDemo } = (await import(`${DEMO}build.mjs`)) as {
      buildDemo(options: { outdir: string }): Promise<unknown>;
    };
    await buildDemo({ outdir: out });
    // The example frontend keeps its session in cookies (docs/browser-sessions.md): the page's origin is trusted.
    const port = await freePort();
    app = await startTestApp({
      database: { dialect: 'sqlite', label: 'sqlite', url: sqlite.url },
      settings: {
        organizations_enabled: true,
        cookie_sessions_enabled: true,
        csrf_trusted_origins: `http://127.0.0.1:${port}`,
      },
    });
    const file = (name: string, type: string) => ({ type, body: readFileSync(join(out, name), 'utf8') });
    server = await countingServer(
      app,
      {
        '/': file('index.html', 'text/html'),
        '/app.js': file('app.js', 'text/javascript'),
        '/style.css': file('style.css', 'text/css'),
      },
      port,
    );
    // alice owns both; bob is in Alpha only, carol in Beta only (added through the CLI's store, as svc orgs does).
    const alice = await app.createUser({ username: 'alice' });
    const bob = await app.createUser({ username: 'bob' });
    const carol = await app.createUser({ username: 'carol' });
    const asAlice = await app.loginAs(alice);
    const { createOrganizationManager } = await import('@svc/core/internal');
    const manager = createOrganizationManager({
      db: app.app.runtime.authDb,
      settings: app.app.runtime.settings,
    });
    for (const [slug, name, member] of [
      ['alpha', 'Alpha', bob],
      ['beta', 'Beta', carol],
    ] as const) {
      ids[slug] = (await asAlice.post('/api/organizations', { name, slug })).body.data.id;
      await manager.service.addMember(ids[slug]!, member.id, 'member');
    }
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await app?.close();
    await sqlite.drop();
    rmSync(out, { recursive: true, force: true });
  });

  const panel = (page: Page) =>
    page.evaluate(() => ({
      organization: (globalThis as any).document.getElementById('org-current')!.dataset.organization,
      heading: (globalThis as any).document.getElementById('org-current')!.textContent,
      members: [...(globalThis as any).document.querySelectorAll('#org-members li')].map(
        (li: any) => li.textContent,
      ),
    }));
  const choose = async (page: Page, id: string) => {
    await page.selectOption('#org-select', id);
    await page.waitForFunction(
      (wanted) => (globalThis as any).document.getElementById('org-current')!.dataset.organization === wanted,
      id,
    );
  };

  it('shows each tab its own organization and members, after reloads and switches too', async () => {
    const context = await loopbackContext(browser);
    const one = await context.newPage();
    await one.goto(`${server.url}/`);
    await one.fill('#login-form input[name=username]', 'alice');
    await one.fill('#login-form input[name=password]', 'correct-horse-battery');
    await one.click('#login-form button[type=submit]');
    await one.waitForFunction(
      () => (globalThis as any).document.getElementById('org-current')!.dataset.organization !== undefined,
    );
    // The second tab starts signed in (the session cookies) and picks its own organization.
    const two = await context.newPage();
    await two.goto(`${server.url}/`);
    await two.waitForFunction(
      () => (globalThis as any).document.getElementById('org-current')!.dataset.organization !== undefined,
    );
    await choose(one, ids.alpha!);
    await choose(two, ids.beta!);

    const alpha = {
      organization: ids.alpha,
      heading: 'Alpha — your role: owner',
      members: ['alice (owner)', 'bob (member)'],
    };
    const beta = {
      organization: ids.beta,
      heading: 'Beta — your role: owner',
      members: ['alice (owner)', 'carol (member)'],
    };
    expect(await panel(one)).toEqual(alpha);
    expect(await panel(two)).toEqual(beta);

    // Reloading both keeps each tab's choice (sessionStorage is per tab).
    await Promise.all([one.reload(), two.reload()]);
    for (const page of [one, two])
      await page.waitForFunction(
        () => (globalThis as any).document.getElementById('org-current')!.dataset.organization !== undefined,
      );
    expect(await panel(one)).toEqual(alpha);
    expect(await panel(two)).toEqual(beta);

    // Switching both at once, crosswise: each ends in the one it chose.
    await Promise.all([choose(one, ids.beta!), choose(two, ids.alpha!)]);
    expect(await panel(one)).toEqual(beta);
    expect(await panel(two)).toEqual(alpha);
    await context.close();
  });
});
