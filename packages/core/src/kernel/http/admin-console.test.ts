// The admin console's serving (SPEC-3 §6, docs/admin-console.md): `/admin/` and every client-side route below
// it answer the console's page with its Content-Security-Policy and `Cache-Control: no-store`; its assets come
// from the package's built dist/console/ (the root `pnpm build` writes it); `admin_console_enabled: false`
// answers 404 there. The pages themselves are test/browser/admin-console.test.ts. Files touch no database: one
// (SQLite) is enough.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from '../../app/create-app.js';
import { createSqliteDatabase, startTestApp, type TestApp } from '../../testing/index.js';
import { ADMIN_CONSOLE_CSP, adminConsoleDir } from '../admin-console.js';
import { resolveStaticFiles } from '../static-files.js';
import { withPageSettings } from './admin-console.js';

describe('admin console at /admin/', () => {
  const database = createSqliteDatabase();
  let enabled: TestApp;
  let disabled: TestApp;

  beforeAll(async () => {
    const db = { dialect: 'sqlite' as const, label: 'sqlite', url: database.url };
    enabled = await startTestApp({ database: db });
    disabled = await startTestApp({ database: db, settings: { admin_console_enabled: false } });
  });
  afterAll(async () => {
    await enabled?.close();
    await disabled?.close();
    await database.drop();
  });

  it('writes the session mode and the API base into its page (docs/admin-console.md "Sign-in and the session")', async () => {
    const page = (await enabled.get('/admin/')).text;
    expect(page).toContain('<meta name="svc-session" content="bearer" />');
    expect(page).toContain('<meta name="svc-api-base" content="/api" />');
    // A prefix is an attribute's text, whatever its characters.
    expect(withPageSettings('<head></head>', { session: 'cookie', apiBase: '/api/"><script>' })).toBe(
      '<head>  <meta name="svc-session" content="cookie" />\n' +
        '    <meta name="svc-api-base" content="/api/&#34;&#62;&#60;script&#62;" />\n  </head>',
    );
  });

  it('is built into the package (pnpm build)', () => {
    for (const file of ['index.html', 'console.js', 'console.css'])
      expect({ file, exists: existsSync(join(adminConsoleDir(), file)) }).toEqual({ file, exists: true });
  });

  it('serves its page with the SPEC CSP and no-store, at /admin/ and at its client-side routes', async () => {
    for (const path of ['/admin/', '/admin/users', '/admin/users/abc?search=x', '/admin/activity?after=3']) {
      const res = await enabled.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-security-policy')).toBe(ADMIN_CONSOLE_CSP);
      expect(res.text).toContain('<script type="module" src="/admin/console.js"></script>');
      // No inline script: the one script is a file of its own origin.
      expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    }
    const csp = ADMIN_CONSOLE_CSP.split('; ');
    expect(csp).toEqual(
      expect.arrayContaining([
        "script-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
      ]),
    );
    expect(ADMIN_CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
  });

  it('serves its script and style with the same CSP, revalidated; redirects /admin; 404 for other files', async () => {
    const script = await enabled.get('/admin/console.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('content-security-policy')).toBe(ADMIN_CONSOLE_CSP);
    expect(script.headers.get('cache-control')).toBe('no-cache');
    expect(script.headers.get('etag')).toBeTruthy();
    const style = await enabled.get('/admin/console.css');
    expect(style.status).toBe(200);
    expect(style.headers.get('content-type')).toMatch(/text\/css/);

    const bare = await fetch(`${enabled.url}/admin?x=1`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/admin/?x=1');

    for (const path of ['/admin/missing.js', '/admin/index.html', '/admin/..%2f..%2fpackage.json']) {
      const res = await enabled.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.body.detail[0].code).toBe('request.not_found');
    }
    const post = await enabled.post('/admin/', {});
    expect(post.status).toBe(404);
  });

  it('answers 404 everywhere under /admin/ when admin_console_enabled is false; the API is untouched', async () => {
    for (const path of ['/admin/', '/admin', '/admin/users', '/admin/console.js']) {
      const res = await disabled.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.body.detail[0].code).toBe('request.not_found');
    }
    expect((await disabled.get('/api/health/')).status).toBe(200);
  });

  it('refuses to start with a static folder at /admin while the console is on; allows it when it is off', async () => {
    const settings = { secret_key: 'k'.repeat(40), auth_database_url: '', log_level: 'CRITICAL' } as const;
    for (const path of ['/admin', '/admin/files']) {
      const refused = createApp({ settings, staticFiles: [{ path, dir: '.' }] });
      await expect(refused.init({ env: {} })).rejects.toThrow(/overlaps the admin console/);
      await refused.close();
    }
    const mounts = [{ path: '/admin', dir: '.' }];
    expect(() => resolveStaticFiles(mounts, { baseDir: '.', apiBase: '/api', adminConsole: true })).toThrow(
      /admin_console_enabled/,
    );
    expect(resolveStaticFiles(mounts, { baseDir: '.', apiBase: '/api', adminConsole: false })).toHaveLength(
      1,
    );
  });
});
