import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_DIR, REPO_DIR, fetchClosing, runCli, spawnCli, freePort } from '../../testing/cli-process.js';

const DEMO_DIR = join(REPO_DIR, 'examples/demo');
const CLI_TIMEOUT = 180_000;

describe('the demo project (examples/demo)', () => {
  it(
    'has migrations that match the live schema of both of its targets',
    async () => {
      // `check` compares the schema with the head revision's snapshot; the database is not touched.
      const env = {
        SVC_AUTH_DATABASE_URL: `file:${join(CLI_DIR, '.tmp-test', `none-${randomBytes(4).toString('hex')}.db`)}`,
      };
      for (const target of ['auth', 'notes']) {
        const result = await runCli(
          ['migrations', 'check', '--target-name', target, '--base-dir', DEMO_DIR],
          { env },
        );
        expect({ target, code: result.code, stderr: result.stderr }).toEqual({ target, code: 0, stderr: '' });
      }
    },
    CLI_TIMEOUT,
  );

  it(
    'starts as its README says: init, its notes migration, serve; then login, a protected route and its settings section',
    async () => {
      const dir = join(CLI_DIR, '.tmp-test', `demo-${randomBytes(5).toString('hex')}`);
      mkdirSync(dir, { recursive: true });
      cpSync(DEMO_DIR, dir, {
        recursive: true,
        filter: (source) => !/node_modules|\.env$|\.db(-shm|-wal)?$/.test(source),
      });
      try {
        const password = 'demo-admin-password';
        expect(
          (await runCli(['init', '--username', 'admin', '--password', password], { cwd: dir })).code,
        ).toBe(0);
        expect((await runCli(['migrations', 'upgrade', '--target-name', 'notes'], { cwd: dir })).code).toBe(
          0,
        );
        const server = spawnCli(['serve', '--port', String(await freePort()), '--log-level', 'warning'], {
          cwd: dir,
        });
        server.stdin.end();
        try {
          const url = await new Promise<string>((resolve, reject) => {
            let text = '';
            server.stderr.on('data', (chunk: Buffer) => {
              text += chunk;
              const match = /listening on (http:\/\/\S+)/.exec(text);
              if (match) resolve(match[1]!);
            });
            server.on('close', () => reject(new Error(`serve exited: ${text}`)));
          });
          // Every request on a connection of its own (fetchClosing): the SIGTERM below then has no idle
          // keep-alive connection to wait for.
          const token = await fetchClosing(`${url}/api/auth/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ username: 'admin', password }),
          }).then((r) => r.json() as Promise<{ access_token: string }>);
          const auth = { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' };
          const created = await fetchClosing(`${url}/api/notes/`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify({ text: 'hi' }),
          });
          expect(created.status).toBe(201);
          const list = (await (await fetchClosing(`${url}/api/notes/`, { headers: auth })).json()) as {
            data: { text: string }[];
          };
          expect(list.data.map((n) => n.text)).toEqual(['hi']);
          // The list query is prepared once (on the first list): later notes still show, newest first.
          await fetchClosing(`${url}/api/notes/`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify({ text: 'then' }),
          });
          const again = (await (
            await fetchClosing(`${url}/api/notes/`, { headers: auth })
          ).json()) as typeof list;
          expect(again.data.map((n) => n.text)).toEqual(['then', 'hi']);
          expect((await fetchClosing(`${url}/api/notes/`)).status).toBe(401);
          expect((await fetchClosing(`${url}/api/open/ping`)).status).toBe(200);
          const schema = (await (
            await fetchClosing(`${url}/api/auth/user/settings/schema`, { headers: auth })
          ).json()) as {
            data: { sections: { name: string }[] };
          };
          expect(schema.data.sections.map((s) => s.name)).toContain('notifications');
          const docs = await fetchClosing(`${url}/docs/`);
          expect(docs.status).toBe(200);
          // The admin console (docs/admin-console.md) with what its pages need switched on in the demo:
          // cookie sessions for its sign-in, organizations and webhooks for their pages.
          const consolePage = await fetchClosing(`${url}/admin/`);
          expect(consolePage.status).toBe(200);
          expect(await consolePage.text()).toContain('/admin/console.js');
          const signIn = await fetchClosing(`${url}/api/auth/session`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', origin: url },
            body: JSON.stringify({ username: 'admin', password }),
          });
          expect(signIn.status).toBe(200);
          for (const path of ['/api/admin/organizations', '/api/admin/webhooks'])
            expect({ path, status: (await fetchClosing(`${url}${path}`, { headers: auth })).status }).toEqual(
              {
                path,
                status: 200,
              },
            );
        } finally {
          // Wait for the graceful stop: a server still running past the test keeps jest from exiting.
          if (server.exitCode === null && server.signalCode === null) {
            const stopped = new Promise((resolve) => server.once('exit', resolve));
            server.kill('SIGTERM');
            await stopped;
          }
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    CLI_TIMEOUT,
  );
});
