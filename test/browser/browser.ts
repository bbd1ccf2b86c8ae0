// Real-browser tests (README "Install and run the whole test suite"): Debian's Chromium driven by playwright-core over the
// DevTools protocol. playwright-core never downloads a browser; `scripts/ensure-browser.mjs` (run before jest by
// `pnpm test`) installs Chromium from Debian when it is missing and the machine allows it.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

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
