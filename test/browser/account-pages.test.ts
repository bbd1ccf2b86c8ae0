// The account pages in a real browser (docs/accounts.md "Built-in account pages"): the password confirmation
// is checked in the page, under the pages' Content-Security-Policy, before the form is submitted.
import { createSqliteDatabase, startTestApp, type TestApp } from '@svc/core/testing';
import type { Browser } from 'playwright-core';
import { describeInChromium, launchBrowser, loopbackContext } from './browser.js';

describeInChromium('account pages in Chromium', () => {
  const database = createSqliteDatabase();
  let app: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    app = await startTestApp({
      database: { dialect: 'sqlite', label: 'sqlite', url: database.url },
      settings: { app_name: 'Notes', public_url: 'https://app.example.com' },
    });
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await database.drop();
  });

  it('refuses to submit while the two passwords differ, names the mismatch, and submits once they match', async () => {
    const page = await (await loopbackContext(browser)).newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    let posted = 0;
    page.on('request', (request) => {
      if (request.method() === 'POST') posted += 1;
    });
    await page.goto(`${app.url}/account/reset-password?token=${'A'.repeat(43)}`);
    // Accessible names: each field found by its label.
    await page.getByLabel('New password').fill('the-first-entry-123');
    await page.getByLabel('Repeat the password').fill('the-second-entry-123');
    await page.getByRole('button', { name: 'Set the password' }).click();
    const refused = await page.getByLabel('Repeat the password').evaluate((input: any) => ({
      valid: input.validity.valid as boolean,
      message: input.validationMessage,
    }));
    expect(refused).toEqual({ valid: false, message: 'The two passwords do not match.' });
    expect(posted).toBe(0);

    await page.getByLabel('Repeat the password').fill('the-first-entry-123');
    await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.getByRole('button', { name: 'Set the password' }).click(),
    ]);
    expect(posted).toBe(1);
    // The unknown token is refused by the server: the submit happened.
    await page.waitForSelector('[role=alert]');
    expect(await page.getByRole('link', { name: 'Back to Notes' }).getAttribute('href')).toBe(
      'https://app.example.com',
    );
    expect(violations).toEqual([]);
  });
});
