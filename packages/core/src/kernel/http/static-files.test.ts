// createApp's `staticFiles` (kernel/static-files.ts, docs/client.md "Serving the frontend"): a folder served
// outside /api with a strict CSP, index.html for a folder, no listing, no dotfiles, no way out of the folder.
// Files touch no database: one (SQLite) is enough.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../app/create-app.js';
import { createSqliteDatabase, startTestApp, type TestApp } from '../../testing/index.js';
import { STATIC_FILES_CSP } from '../static-files.js';

/** A GET as written, byte for byte (fetch would normalise `..` and `%2e%2e` away before sending). */
function rawGet(
  url: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('staticFiles', () => {
  const database = createSqliteDatabase();
  let root: string;
  let app: TestApp;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'svc-static-'));
    const site = join(root, 'site');
    mkdirSync(join(site, 'empty-folder'), { recursive: true });
    mkdirSync(join(site, 'nested'));
    writeFileSync(join(site, 'index.html'), '<!doctype html><script type="module" src="./app.js"></script>');
    writeFileSync(join(site, 'app.js'), 'document.title = "ran";');
    writeFileSync(join(site, 'nested', 'index.html'), '<p>nested</p>');
    writeFileSync(join(site, '.env'), 'SECRET=1');
    writeFileSync(join(root, 'outside.txt'), 'not served');
    // SPEC-3 §7 rule 8: links that resolve outside the folder (a file, a folder, one with an index.html, a
    // chain) and links that stay inside it.
    mkdirSync(join(root, 'proj'));
    writeFileSync(join(root, 'proj', 'auth.db'), 'not served: the database');
    writeFileSync(join(root, 'proj', 'index.html'), 'not served: an outside index');
    symlinkSync(join(root, 'outside.txt'), join(site, 'link-out.txt'));
    symlinkSync('../outside.txt', join(site, 'relative-link-out.txt'));
    symlinkSync(root, join(site, 'linkdir'));
    symlinkSync(join(root, 'proj'), join(site, 'proj-link'));
    symlinkSync(join(site, 'link-out.txt'), join(site, 'chain.txt'));
    symlinkSync(join(site, 'app.js'), join(site, 'alias.js'));
    symlinkSync(join(site, 'nested'), join(site, 'nested-alias'));
    // A relative folder is resolved against the project directory (baseDir).
    app = await startTestApp({
      database: { dialect: 'sqlite', label: 'sqlite', url: database.url },
      baseDir: root,
      staticFiles: [{ path: '/app', dir: 'site' }],
    });
  });
  afterAll(async () => {
    await app?.close();
    await database.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves index.html for the folder, with the strict CSP, no-cache and a validator', async () => {
    const res = await fetch(`${app.url}/app/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(STATIC_FILES_CSP);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toContain('./app.js');
    // (fetch would add `Cache-Control: no-cache` to a conditional request, which asks for the whole file)
    const again = await rawGet(app.url, '/app/', { 'if-none-match': res.headers.get('etag')! });
    expect(again.status).toBe(304);
  });

  it('serves a script with its JavaScript type, and a nested folder by its index.html', async () => {
    const script = await fetch(`${app.url}/app/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(await (await fetch(`${app.url}/app/nested/`)).text()).toBe('<p>nested</p>');
  });

  it('redirects the folder without its slash, so relative URLs in the page resolve inside it', async () => {
    const res = await fetch(`${app.url}/app`, { redirect: 'manual' });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/app/');
  });

  it.each([
    ['a missing file', '/app/missing.js'],
    ['a folder without index.html (no listing)', '/app/empty-folder/'],
    ['a dotfile', '/app/.env'],
    ['a path climbing out of the folder', '/app/../outside.txt'],
    ['a percent-encoded climb', '/app/%2e%2e/outside.txt'],
    ['an encoded slash in a climb', '/app/..%2foutside.txt'],
    ['a backslash climb', '/app/..%5coutside.txt'],
    ['a NUL byte', '/app/index.html%00.js'],
    ['a symbolic link to a file outside the folder', '/app/link-out.txt'],
    ['a relative symbolic link out of the folder', '/app/relative-link-out.txt'],
    ['a file under a linked folder outside', '/app/linkdir/proj/auth.db'],
    ['a percent-encoded path under a linked folder outside', '/app/linkdir/proj/auth%2Edb'],
    ['a linked folder outside (its index.html)', '/app/proj-link/'],
    ['a linked folder outside (its index.html, by name)', '/app/proj-link/index.html'],
    ['a link to a link out of the folder', '/app/chain.txt'],
  ])('answers %s with the uniform 404 request.not_found', async (_what, path) => {
    const res = await rawGet(app.url, path);
    expect(res.status).toBe(404);
    expect(res.body).not.toContain('not served');
    expect(res.body).not.toContain('SECRET');
    expect(JSON.parse(res.body).detail[0]).toMatchObject({ code: 'request.not_found', loc: ['path'] });
  });

  it('serves symbolic links that stay inside the folder', async () => {
    const file = await fetch(`${app.url}/app/alias.js`);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe('document.title = "ran";');
    const folder = await fetch(`${app.url}/app/nested-alias/`);
    expect(folder.status).toBe(200);
    expect(await folder.text()).toBe('<p>nested</p>');
  });

  it('answers other methods than GET and HEAD with the uniform 404', async () => {
    const res = await app.post('/app/', { a: 1 });
    expect(res.status).toBe(404);
    expect(res.body.detail[0].code).toBe('request.not_found');
  });

  it('leaves the API and the docs to svc', async () => {
    expect((await fetch(`${app.url}/api/health/live`)).status).toBe(200);
  });

  it.each([
    ['the root', '/'],
    ['a trailing slash', '/app/'],
    ['a climb', '/app/../x'],
    ['the API', '/api/files'],
    ['the docs', '/docs'],
    ['a relative path', 'app'],
  ])('refuses to start with %s as the path', async (_what, path) => {
    const refused = createApp({
      settings: { secret_key: 'k'.repeat(40), auth_database_url: '', log_level: 'CRITICAL' },
      staticFiles: [{ path, dir: '.' }],
    });
    await expect(refused.init({ env: {} })).rejects.toThrow(/staticFiles: path/);
    await refused.close();
  });
});
