// The cluster suite's deployment (docs/deployment.md "Several hosts behind a load balancer"): the demo project
// served by two `svc serve --workers 2` hosts on loopback ports, one fresh PostgreSQL database, one Redis, and
// nginx in front with the configuration docs/deployment.md shows, read from the page itself.
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresDatabase } from '../../packages/core/src/testing/each.js';
import type { RequestOptions, TestClient, TestResponse } from '../../packages/core/src/testing/test-app.js';
import { CLI_DIR, REPO_DIR, freePort, listeningUrl, runCli, spawnCli } from '../../testing/cli-process.js';
import { rowsOf } from '../../testing/project-db.js';

export const NGINX = '/usr/sbin/nginx';
export const ADMIN = { username: 'admin', password: 'cluster-admin-password-1' };
/** The balancer's address: the only one each host trusts with X-Forwarded-For (`--forwarded-allow-ips`). */
export const BALANCER_ADDRESS = '127.0.0.1';

/** The nginx block of docs/deployment.md that follows the marker comment, as written there. */
function documentedNginxConfig(): string {
  const page = readFileSync(join(REPO_DIR, 'docs', 'deployment.md'), 'utf8');
  const marker = page.indexOf('<!-- test/cluster/cluster.ts reads the next nginx block');
  if (marker < 0) throw new Error('docs/deployment.md lost the marker of its tested nginx block');
  const block = /```nginx\n([\s\S]*?)^```$/m.exec(page.slice(marker));
  if (!block) throw new Error('docs/deployment.md has no nginx block after the marker');
  return block[1]!;
}

/**
 * The documented block with this test's loopback ports in its `server` lines and `listen`, TLS left out, and
 * one test-only header naming the host that answered (`X-Upstream`, nginx's `$upstream_addr`).
 */
function testNginxConfig(hostPorts: number[], listenPort: number): string {
  let servers = 0;
  const lines = documentedNginxConfig()
    .split('\n')
    .filter((line) => !/^\s*ssl_certificate/.test(line))
    .map((line) => {
      const server = /^(\s*)server\s+[\d.]+:\d+(.*)$/.exec(line);
      if (server) {
        const port = hostPorts[servers++];
        if (port === undefined)
          throw new Error('the documented upstream has more servers than the test hosts');
        return `${server[1]}server 127.0.0.1:${port}${server[2]}`;
      }
      if (/^\s*listen\s/.test(line)) return `  listen ${BALANCER_ADDRESS}:${listenPort};`;
      if (/^\s*server_name\s/.test(line)) return `${line}\n  add_header X-Upstream $upstream_addr always;`;
      return line;
    });
  if (servers !== hostPorts.length) {
    throw new Error(
      `the documented upstream has ${servers} servers, the test runs ${hostPorts.length} hosts`,
    );
  }
  return lines.join('\n');
}

export interface Nginx {
  url: string;
  port: number;
  stop(): Promise<void>;
  errors(): string;
}

/** Starts nginx as a child (no daemon), its prefix, configuration, logs and temp files in a folder of its own. */
async function startNginx(hostPorts: number[]): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-nginx-'));
  const port = await freePort();
  const conf = [
    'daemon off;',
    'worker_processes 1;',
    // Under root nginx's workers would run as nobody, who cannot write into this folder.
    ...(process.getuid?.() === 0 ? ['user root;'] : []),
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} warn;`,
    'events { worker_connections 1024; }',
    'http {',
    '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
      (kind) => `  ${kind}_temp_path ${join(dir, kind)};`,
    ),
    testNginxConfig(hostPorts, port),
    '}',
    '',
  ].join('\n');
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d));
  child.stderr.on('data', (d: Buffer) => (output += d));
  const errors = () => {
    const log = join(dir, 'error.log');
    return output + (existsSync(log) ? readFileSync(log, 'utf8') : '');
  };
  for (let i = 0; !(await accepts(port)); i++) {
    if (child.exitCode !== null || i > 100) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not start: ${errors()}`);
    }
    await sleep(50);
  }
  return {
    url: `http://${BALANCER_ADDRESS}:${port}`,
    port,
    errors,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** One host: `svc serve --workers 2` in a process group of its own, so a SIGKILL takes its workers too. */
export interface Host {
  name: string;
  port: number;
  /** `127.0.0.1:<port>`, as nginx's `$upstream_addr` names it. */
  address: string;
  /** Starts the host (again) with the cluster's settings plus `settings`; resolves once it listens. */
  start(settings?: Record<string, string>): Promise<void>;
  /** SIGKILL of the whole process group (primary and workers): what a host that loses power does. */
  kill(): Promise<void>;
  /** SIGTERM to `svc serve` (it drains and exits); resolves with the exit code. */
  stop(): Promise<number | null>;
  running(): boolean;
  /** The process group of the running host (its primary and workers), or undefined. */
  processGroup(): number | undefined;
  /** The last 64 KiB the host printed. */
  output(): string;
  /** Every WARNING line the host printed (kept apart: a flood of errors would push them out of `output`). */
  warnings(): string[];
}

function createHost(name: string, port: number, dir: string, env: () => Record<string, string>): Host {
  let child: ChildProcessWithoutNullStreams | undefined;
  let output = '';
  let partial = '';
  const warnings: string[] = [];
  const exited = (c: ChildProcess) => c.exitCode !== null || c.signalCode !== null;
  const host: Host = {
    name,
    port,
    address: `127.0.0.1:${port}`,
    async start(settings = {}) {
      const extra: Record<string, string> = {};
      for (const [key, value] of Object.entries(settings)) extra[`SVC_${key.toUpperCase()}`] = value;
      const started = spawnCli(
        [
          'serve',
          '--base-dir',
          dir,
          '--host',
          '127.0.0.1',
          '--port',
          String(port),
          '--workers',
          '2',
          '--forwarded-allow-ips',
          BALANCER_ADDRESS,
        ],
        { cwd: dir, env: { ...env(), ...extra }, detached: true },
      );
      child = started;
      started.stdin.end();
      const keep = (d: Buffer) => {
        output = (output + d).slice(-65_536);
        const lines = (partial + d).split('\n');
        partial = lines.pop()!;
        warnings.push(...lines.filter((line) => line.includes(' WARNING ')));
      };
      started.stdout.on('data', keep);
      started.stderr.on('data', keep);
      await listeningUrl(started);
    },
    async kill() {
      const running = child;
      if (!running || exited(running)) return;
      const gone = new Promise((resolve) => running.once('exit', resolve));
      process.kill(-running.pid!, 'SIGKILL');
      await gone;
      // The workers got the same signal; wait until none of the group is left.
      for (let i = 0; i < 100 && groupAlive(running.pid!); i++) await sleep(20);
    },
    async stop() {
      const running = child;
      if (!running || exited(running)) return running?.exitCode ?? null;
      const code = new Promise<number | null>((resolve) => running.once('exit', (c) => resolve(c)));
      running.kill('SIGTERM');
      return code;
    },
    running: () => !!child && !exited(child),
    processGroup: () => (child && !exited(child) ? child.pid : undefined),
    output: () => output,
    warnings: () => warnings,
  };
  return host;
}

/** The socket inodes the processes of group `pgid` hold open (Linux /proc). */
function socketInodesOf(pgid: number): Set<string> {
  const inodes = new Set<string>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // `pid (comm) state ppid pgrp ...`: the fields after the command's closing parenthesis.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const link = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (link) inodes.add(link[1]!);
      }
    } catch {
      /* the process ended meanwhile */
    }
  }
  return inodes;
}

/**
 * The host whose process holds the TCP connection from local port `fromPort` to port `toPort` on loopback
 * (Linux /proc): which host is making a webhook attempt the test's receiver is holding open.
 */
export function hostHolding(hosts: readonly Host[], fromPort: number, toPort: number): Host | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  let inode: string | undefined;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      if (cols[1]!.endsWith(`:${hex(fromPort)}`) && cols[2]!.endsWith(`:${hex(toPort)}`)) inode = cols[9];
    }
  }
  if (inode === undefined) return undefined;
  return hosts.find((host) => {
    const pgid = host.processGroup();
    return pgid !== undefined && socketInodesOf(pgid).has(inode!);
  });
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface Cluster {
  /** nginx's URL: every test request goes through it. */
  url: string;
  hosts: [Host, Host];
  nginx: Nginx;
  /** Rows of a query on the cluster's database. */
  rows<T>(query: string): Promise<T[]>;
  /** A client whose connections leave from `localAddress` (a loopback address: a client of its own). */
  client(localAddress?: string): ClusterClient;
  close(): Promise<void>;
}

export interface ClusterOptions {
  /** Settings of every host (`SVC_<NAME>`), besides those of the demo's svc.yaml and .env. */
  settings: Record<string, string>;
}

/**
 * A copy of the demo (main.ts, svc.yaml and its own migration target) in packages/cli/.tmp-test,
 * where `@svc/core` resolves to the workspace, set up on a fresh PostgreSQL database as the deploy job of
 * docs/deployment.md does: `svc init` (revisions of this checkout's auth tables, the superuser) and
 * `svc migrations upgrade --target-name notes`. Then the two hosts, one after the other, and nginx.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const database = await createPostgresDatabase();
  const dir = join(CLI_DIR, '.tmp-test', `cluster-${randomBytes(6).toString('hex')}`);
  const demo = join(REPO_DIR, 'examples', 'demo');
  const hosts: Host[] = [];
  let nginx: Nginx | undefined;
  const close = async () => {
    await nginx?.stop();
    await Promise.all(hosts.map((host) => host.kill()));
    rmSync(dir, { recursive: true, force: true });
    await database.drop();
  };
  try {
    mkdirSync(dir, { recursive: true });
    // Not its package.json: a second package named `demo` in the repository collides in jest's module map
    // (packages/cli's, `"type": "module"`, applies instead).
    for (const file of ['main.ts', 'svc.yaml']) copyFileSync(join(demo, file), join(dir, file));
    cpSync(join(demo, 'migrations', 'notes'), join(dir, 'migrations', 'notes'), { recursive: true });
    const env = () => ({ SVC_DATABASE_URL: database.url, SVC_LOG_LEVEL: 'WARNING', ...options.settings });
    const cli = async (args: string[]) => {
      const result = await runCli([...args, '--base-dir', dir], { cwd: dir, env: env() });
      if (result.code !== 0) throw new Error(`svc ${args.join(' ')}: ${result.stderr}${result.stdout}`);
    };
    const init = ['init', '--username', ADMIN.username, '--password', ADMIN.password];
    await cli([...init, '--database-url', database.url]);
    await cli(['migrations', 'upgrade', '--target-name', 'notes']);
    writeFileSync(join(dir, '.gitignore'), '*\n');
    for (const name of ['A', 'B']) hosts.push(createHost(name, await freePort(), dir, env));
    // One after the other: both would build the activity log's text index at once otherwise.
    for (const host of hosts) await host.start();
    nginx = await startNginx(hosts.map((host) => host.port));
  } catch (error) {
    const outputs = hosts.map((host) => `host ${host.name}: ${host.output()}`).join('\n');
    await close();
    throw new Error(`${(error as Error).message}\n${outputs}`);
  }
  const balancer = nginx;
  return {
    url: balancer.url,
    hosts: hosts as [Host, Host],
    nginx: balancer,
    rows: (query) => rowsOf(database.url, dir, query),
    client: (localAddress = '127.0.0.1') => createClusterClient(balancer.url, localAddress),
    close,
  };
}

/** A {@link TestClient} on node:http whose keep-alive connections leave from one local address. */
export interface ClusterClient extends TestClient {
  localAddress: string;
  /** Closes the kept-alive connections. */
  close(): void;
}

function createClusterClient(baseUrl: string, localAddress: string): ClusterClient {
  const agent = new Agent({ keepAlive: true, localAddress });
  function send<T>(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    // The two bodies the cluster tests send: a login form, or JSON.
    const form = options.form && new URLSearchParams(options.form).toString();
    const body = form ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    if (body !== undefined)
      headers['content-type'] = form ? 'application/x-www-form-urlencoded' : 'application/json';
    return new Promise((resolve, reject) => {
      const req = request(`${baseUrl}${path}`, { method, headers, agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('error', reject);
        res.on('end', () => {
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined)
              responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body: parsed as T, text });
        });
      });
      req.setTimeout(20_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(body);
    });
  }
  return {
    localAddress,
    request: send,
    get: (path, options) => send('GET', path, options),
    post: (path, body, options) => send('POST', path, { ...options, body }),
    put: (path, body, options) => send('PUT', path, { ...options, body }),
    patch: (path, body, options) => send('PATCH', path, { ...options, body }),
    delete: (path, options) => send('DELETE', path, options),
    close: () => agent.destroy(),
  };
}

/** The host that answered (nginx's `$upstream_addr` in the test-only `X-Upstream` header). */
export function upstreamOf(res: TestResponse): string {
  return res.headers.get('x-upstream') ?? '';
}
