// Real-browser tests (README "Install and run the whole test suite"): Debian's Chromium driven by playwright-core over the
// DevTools protocol. playwright-core never downloads a browser; `scripts/ensure-test-tools.mjs` (run before jest by
// `pnpm test`) installs Chromium from Debian when it is missing and the machine allows it.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import {
  createSqliteDatabase,
  reportSkipped,
  startTestApp,
  type StartTestAppOptions,
  type TestApp,
  type TestDatabase,
} from '@svc/core/testing';
import { freePort } from '../../testing/cli-process.js';
import { bundleClient, bundleReactPage, countingServer, type CountingServer } from '../../testing/client.js';

/** Where Chromium is: `SVC_TEST_CHROMIUM`, else Debian's `/usr/bin/chromium`. */
export const CHROMIUM_PATH = process.env.SVC_TEST_CHROMIUM || '/usr/bin/chromium';

/** Why the browser suites cannot run here, or undefined when Chromium is present. */
export function browserMissingReason(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  return `no Chromium at ${CHROMIUM_PATH} (install Debian's package as root: apt-get install chromium, or set SVC_TEST_CHROMIUM)`;
}

/**
 * The flags this machine needs: no sandbox (root in a container), no GPU, no QUIC, and nothing that reaches out
 * on its own (first-run, background networking, component updates, sync).
 */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `describe(name, body)` where Chromium is present; elsewhere a suite whose one test says why it did not run. */
export function describeInChromium(name: string, body: () => void): void {
  const missing = browserMissingReason();
  if (missing) describe(name, () => reportSkipped(name, missing));
  else describe(name, body);
}

/** What {@link chromiumSuite} starts; its members are set once the suite's `beforeAll` has run. */
export interface ChromiumSuite {
  /** The suite's SQLite database (set at once), for a second app a test starts on it. */
  database: TestDatabase;
  app: TestApp;
  /** The app's own handler on a second listener, serving the page beside the API (one origin). */
  server: CountingServer;
  browser: Browser;
  /** The origin of `server`: `http://localhost:<port>` for passkeys, else `http://127.0.0.1:<port>`. */
  origin: string;
}

export interface ChromiumSuiteOptions {
  /** The HTML served at `/`. */
  page?: string;
  /** Serve @svc/client, bundled as a frontend's bundler would, at `/client.js`. */
  client?: boolean;
  /**
   * Serve on `http://localhost:<port>` (a secure context whose host can be a relying-party id) with passkeys
   * enabled and `webauthn_rp_id` / `webauthn_origins` naming that origin; open pages with {@link passkeyPage}.
   */
  passkeys?: boolean;
  /**
   * Cookie sessions (SPEC-3 section 5) on: `cookie_sessions_enabled`, and the page's origin (the counting
   * server's, on a port chosen before the app starts) in `csrf_trusted_origins`.
   */
  cookieSessions?: boolean;
  /**
   * Serve this TypeScript page, bundled with React 19, @svc/react and @svc/client, at `/app.js`, and bundled with
   * React 18 at `/app18.js` (the HTML `page` at `/react18` loads that one).
   */
  reactPage?: string;
  settings?: StartTestAppOptions['settings'];
  /** More options of the app (a `mailer` whose mails a test reads, `organizationRoles`…). */
  app?: Omit<StartTestAppOptions, 'database' | 'settings'>;
}

/**
 * The setup of a browser suite, registered as the calling `describe`'s `beforeAll` and `afterAll`: a test app
 * on a new SQLite database, a {@link countingServer} on its handler serving the page, and a headless
 * Chromium; all closed, and the database dropped, after the suite.
 */
export function chromiumSuite(options: ChromiumSuiteOptions = {}): ChromiumSuite {
  const sqlite = createSqliteDatabase();
  const suite = { database: { dialect: 'sqlite', label: 'sqlite', url: sqlite.url } } as ChromiumSuite;
  beforeAll(async () => {
    const port = options.passkeys || options.cookieSessions ? await freePort() : 0;
    const passkeySettings = options.passkeys
      ? {
          passkeys_enabled: true,
          webauthn_rp_id: 'localhost',
          webauthn_origins: `http://localhost:${port}`,
        }
      : {};
    const cookieSettings = options.cookieSessions
      ? {
          cookie_sessions_enabled: true,
          csrf_trusted_origins: `http://${options.passkeys ? 'localhost' : '127.0.0.1'}:${port}`,
        }
      : {};
    suite.app = await startTestApp({
      ...options.app,
      database: suite.database,
      settings: { ...passkeySettings, ...cookieSettings, ...options.settings },
    });
    const pages: Record<string, { type: string; body: string }> = {};
    if (options.page !== undefined) pages['/'] = { type: 'text/html', body: options.page };
    if (options.client) pages['/client.js'] = { type: 'text/javascript', body: await bundleClient() };
    if (options.reactPage) {
      pages['/app.js'] = { type: 'text/javascript', body: await bundleReactPage(options.reactPage) };
      pages['/app18.js'] = { type: 'text/javascript', body: await bundleReactPage(options.reactPage, 18) };
      if (options.page !== undefined)
        pages['/react18'] = { type: 'text/html', body: options.page.replace('/app.js', '/app18.js') };
    }
    suite.server = await countingServer(suite.app, pages, port);
    suite.origin = options.passkeys ? `http://localhost:${port}` : suite.server.url;
    suite.browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await suite.browser?.close();
    await suite.server?.close();
    await suite.app?.close();
    await sqlite.drop();
  });
  return suite;
}

/** Opens `url` in `page` and waits for its script to set `window.ready` (the bundled client's pages do). */
export async function openReadyPage(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => (globalThis as any).ready === true);
}

/** A headless Chromium; playwright-core gives it a new empty profile (its `--user-data-dir`) and removes it. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS });
}

/** A fresh context (no stored authorization) that may fetch only from loopback: no CDN, no validator badge. */
export async function loopbackContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext();
  context.setDefaultTimeout(10_000);
  await context.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => route.abort());
  return context;
}

/**
 * A page in a fresh context that may fetch only from `origin`, with the DevTools protocol's WebAuthn virtual
 * authenticator (docs/passkeys.md): a platform authenticator (CTAP2, internal transport) holding discoverable
 * credentials, whose user verification succeeds and whose presence check answers itself. WebAuthn needs a
 * secure context: serve the page on `http://localhost:<port>` (an IP address is no relying-party id).
 */
export async function passkeyPage(browser: Browser, origin: string): Promise<Page> {
  const context = await browser.newContext();
  context.setDefaultTimeout(10_000);
  await context.route(
    (url) => url.origin !== origin,
    (route) => route.abort(),
  );
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return page;
}
