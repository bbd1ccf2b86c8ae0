// createApp's `staticFiles` in a real browser (docs/client.md "Serving the frontend"): under the default
// Content-Security-Policy the page's own script and stylesheet load and it reaches the API over fetch and a
// WebSocket on its origin, while an inline script and an inline style are refused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteDatabase, startTestApp, type TestApp } from '@svc/core/testing';
import type { Browser } from 'playwright-core';
import { describeInChromium, launchBrowser, loopbackContext } from './browser.js';

const PAGE = `<!doctype html>
<html><head><link rel="stylesheet" href="./style.css" /></head>
<body>
  <p id="styled">styled by the stylesheet</p>
  <p id="inline-style" style="color: rgb(255, 0, 0)">styled inline</p>
  <script>document.body.dataset.inline = 'ran';</script>
  <script type="module" src="./own.js"></script>
</body></html>`;

const OWN_SCRIPT = `
const live = await fetch('/api/health/live');
const socket = new WebSocket(\`ws://\${location.host}/api/nowhere\`);
await new Promise((resolve) => { socket.onerror = socket.onclose = resolve; });
document.body.dataset.own = String(live.status);`;

describeInChromium('staticFiles in Chromium', () => {
  const database = createSqliteDatabase();
  let dir: string;
  let app: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-static-browser-'));
    writeFileSync(join(dir, 'index.html'), PAGE);
    writeFileSync(join(dir, 'own.js'), OWN_SCRIPT);
    writeFileSync(join(dir, 'style.css'), '#styled { color: rgb(0, 128, 0); }');
    app = await startTestApp({
      database: { dialect: 'sqlite', label: 'sqlite', url: database.url },
      staticFiles: [{ path: '/site', dir }],
    });
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs the page's own script and stylesheet, refuses inline script and style, allows same-origin connections", async () => {
    const page = await (await loopbackContext(browser)).newPage();
    // Installed by the browser before the page's own code, outside its CSP: every refusal from the start.
    await page.addInitScript(() => {
      const seen: string[] = [];
      (globalThis as any).violations = seen;
      (globalThis as any).document.addEventListener('securitypolicyviolation', (event: any) =>
        seen.push(event.effectiveDirective as string),
      );
    });
    await page.goto(`${app.url}/site/`);
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.own !== undefined);

    const result = await page.evaluate(() => {
      const { document, getComputedStyle } = globalThis as any;
      return {
        own: document.body.dataset.own as string,
        inline: document.body.dataset.inline as string | undefined,
        styled: getComputedStyle(document.getElementById('styled')).color as string,
        inlineStyled: getComputedStyle(document.getElementById('inline-style')).color as string,
        violations: [...new Set((globalThis as any).violations as string[])].sort(),
      };
    });
    expect(result).toEqual({
      own: '200', // fetch to the same origin answered
      inline: undefined,
      styled: 'rgb(0, 128, 0)',
      inlineStyled: 'rgb(0, 0, 0)',
      // No connect-src refusal: the WebSocket to the page's own origin was allowed ('self' covers ws:).
      violations: ['script-src-elem', 'style-src-attr'],
    });
  });
});
