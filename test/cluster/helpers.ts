// Steps the cluster tests share: users, logins and the round robin of nginx.
import type { TestResponse } from '../../packages/core/src/testing/test-app.js';
import { ADMIN, upstreamOf, type Cluster, type ClusterClient, type Host } from './cluster.js';

export const PASSWORD = 'cluster-user-password-1';

let nextAddress = 0;
/** A loopback address no client of this process used yet: a client of its own for nginx and `auth_rate_limit`. */
export function freshAddress(): string {
  const n = nextAddress++;
  return `127.0.${10 + Math.floor(n / 250)}.${(n % 250) + 2}`;
}

/** The envelope's `data`, or the body as it is (token responses are not wrapped). */
export function dataOf<T = any>(res: TestResponse): T {
  const body = res.body as { data?: T } | undefined;
  return (body && typeof body === 'object' && 'data' in body ? body.data : body) as T;
}

export function expectStatus(res: TestResponse, status: number): void {
  if (res.status !== status)
    throw new Error(`expected ${status}, got ${res.status}: ${res.text.slice(0, 300)}`);
}

/** A client of a fresh address that ran one request, closed. */
async function once(cluster: Cluster, run: (client: ClusterClient) => Promise<TestResponse>) {
  const client = cluster.client(freshAddress());
  try {
    return await run(client);
  } finally {
    client.close();
  }
}

/** `POST /api/auth/token` from a client of its own (so setup logins do not count on a test's client). */
function login(cluster: Cluster, user: { username: string; password: string }) {
  return once(cluster, (client) =>
    client.post('/api/auth/token', undefined, { form: { username: user.username, password: user.password } }),
  );
}

/** The access token of a password login (no second step). */
export async function accessToken(cluster: Cluster, user: { username: string; password: string }) {
  const res = await login(cluster, user);
  expectStatus(res, 200);
  return res.body.access_token as string;
}

export async function adminToken(cluster: Cluster): Promise<string> {
  return accessToken(cluster, ADMIN);
}

/** Registers `username` (registration is on in the demo); returns its id. */
export async function register(
  cluster: Cluster,
  username: string,
): Promise<{ id: string; username: string; password: string }> {
  const res = await once(cluster, (client) =>
    client.post('/api/auth/register', { username, password: PASSWORD }),
  );
  expectStatus(res, 201);
  return { id: dataOf<{ id: string }>(res).id, username, password: PASSWORD };
}

/** A group holding `codenames` (created when missing) given to `userId`. */
export async function grant(cluster: Cluster, userId: string, codenames: string[]): Promise<void> {
  const admin = cluster.client();
  const token = await adminToken(cluster);
  try {
    const existing = dataOf<{ id: number; codename: string }[]>(
      await admin.get('/api/admin/permissions/permissions', { token }),
    );
    const ids: number[] = [];
    for (const codename of codenames) {
      const found = existing.find((p) => p.codename === codename);
      if (found) ids.push(found.id);
      else {
        const created = await admin.post('/api/admin/permissions/permissions', { codename }, { token });
        expectStatus(created, 201);
        ids.push(dataOf<{ id: number }>(created).id);
      }
    }
    const group = await admin.post(
      '/api/admin/permissions/groups',
      { name: `group-${codenames.join('-')}-${userId.slice(0, 8)}`, permissionIds: ids },
      { token },
    );
    expectStatus(group, 201);
    const set = await admin.put(
      `/api/admin/permissions/users/${userId}/groups`,
      { groupIds: [dataOf<{ id: number }>(group).id] },
      { token },
    );
    expectStatus(set, 200);
  } finally {
    admin.close();
  }
}

/**
 * Makes nginx's next request go to `host`: nginx's round robin alternates between the two hosts, so a probe
 * that landed on `host` means the next one goes to the other, and one more probe turns it back. Exact while
 * the test sends nothing else (one nginx worker, requests one at a time); the steps check `X-Upstream`.
 */
export async function nextGoesTo(cluster: Cluster, host: Host): Promise<void> {
  const probe = cluster.client();
  try {
    const first = await probe.get('/api/health/live');
    if (upstreamOf(first) !== host.address) return;
    const second = await probe.get('/api/health/live');
    if (upstreamOf(second) === host.address) throw new Error('nginx sent two probes in a row to one host');
  } finally {
    probe.close();
  }
}

/** `client` sends `run`'s request to `host` (through nginx) and the test fails when another host answered. */
export async function onHost(
  cluster: Cluster,
  host: Host,
  run: () => Promise<TestResponse>,
): Promise<TestResponse> {
  await nextGoesTo(cluster, host);
  const res = await run();
  if (upstreamOf(res) !== host.address) {
    throw new Error(`expected host ${host.name} (${host.address}), answered by ${upstreamOf(res)}`);
  }
  return res;
}
