// Shared set-up of the admin console's browser tests (SPEC-3 §6, docs/admin-console.md): a browser context
// confined to the app's origin that collects CSP refusals, a wait-then-assert helper, axe-core's serious and
// critical violations, and a page check that keeps a screenshot as a test artifact (test-artifacts/, git-ignored).
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';

const REPO = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../..');
/** axe-core's browser build, from node_modules: injected into the page, nothing downloaded. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** `test-artifacts/<name>/`, created. */
export function artifactsDir(name: string): string {
  const dir = join(REPO, 'test-artifacts', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A context in `locale` that may fetch only from the app's origin, collecting CSP refusals of its pages. */
export async function consoleContext(browser: Browser, origin: string, locale = 'en-US') {
  const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(10_000);
  await context.route(
    (url) => url.origin !== origin,
    (route) => route.abort(),
  );
  const refusals: string[] = [];
  context.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) refusals.push(message.text());
  });
  return { context, refusals };
}

/** Waits (up to 10 s) until `read` gives `expected`; then asserts it, so a failure shows the last value. */
export async function until<T>(read: () => Promise<T>, expected: T | ((value: T) => boolean)): Promise<void> {
  const matches = (value: T) =>
    typeof expected === 'function' ? (expected as (value: T) => boolean)(value) : value === expected;
  let value = await read();
  for (let i = 0; i < 100 && !matches(value); i++) {
    await new Promise((done) => setTimeout(done, 100));
    value = await read();
  }
  if (typeof expected === 'function')
    expect({ value, matches: matches(value) }).toEqual({ value, matches: true });
  else expect(value).toEqual(expected);
}

/** axe-core on the page as it is: serious and critical violations, by rule and the elements involved. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await (globalThis as any).axe.run((globalThis as any).document, {
      resultTypes: ['violations'],
    });
    return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[]).map(
      (v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }),
    );
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.targets.join(', ')}`);
}

/** A screenshot of the page as `<dir>/<name>.png`, then axe-core's check (no serious or critical violation). */
export async function checkPage(page: Page, dir: string, name: string): Promise<void> {
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
  expect({ page: name, violations: await seriousViolations(page) }).toEqual({ page: name, violations: [] });
}
