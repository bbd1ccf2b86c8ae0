import { freePort } from '../../../../testing/cli-process.js';
import {
  oidcSettings,
  socialSignIn,
  startTestGithub,
  startTestIdp,
  type CallbackResult,
  type TestGithub,
  type TestIdp,
} from '../../../../testing/oidc.js';
import { eq } from 'drizzle-orm';
import { DEFAULT_TEST_PASSWORD, describeEachDatabase, startTestApp, type TestApp } from '../testing/index.js';
import type { SocialLoginTables } from './tables.js';

type Provider = 'acme' | 'github';
type ProviderEmail = 'verified' | 'unverified' | 'absent';
type Account = 'none' | 'verified' | 'unverified' | 'linked';
type Entry = 'login' | 'link';
type Policy = 'verified_email' | 'explicit';

/** The outcome SPEC-3 section 1 names for a cell, written from the SPEC's rules (not from the code's decision). */
type Outcome =
  | 'login-existing' // rule 3: linked to the account with the email, which logs in
  | 'register' // rule 4: a new account
  | 'linked' // rule 2: attached to the caller
  | 'auth.oauth_account_exists'
  | 'auth.oauth_registration_disabled';

function expected(cell: Cell, registration: boolean): Outcome {
  if (cell.entry === 'link') return 'linked'; // rule 2: the caller proved both sides
  const accountHasEmail = cell.account !== 'none' && cell.email !== 'absent';
  if (!accountHasEmail) return registration ? 'register' : 'auth.oauth_registration_disabled';
  const accountVerified = cell.account === 'verified' || cell.account === 'linked';
  return cell.policy === 'verified_email' && cell.email === 'verified' && accountVerified
    ? 'login-existing'
    : 'auth.oauth_account_exists';
}

interface Cell {
  provider: Provider;
  email: ProviderEmail;
  account: Account;
  entry: Entry;
  policy: Policy;
}

const CELLS: Cell[] = [];
for (const provider of ['acme', 'github'] as const)
  for (const email of ['verified', 'unverified', 'absent'] as const)
    for (const account of ['none', 'verified', 'unverified', 'linked'] as const)
      for (const entry of ['login', 'link'] as const)
        for (const policy of ['verified_email', 'explicit'] as const)
          CELLS.push({ provider, email, account, entry, policy });

/** Runs `fn` over `items`, `limit` at a time. */
async function pool<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await fn(items[index]!, index);
      }
    }),
  );
  return results;
}

// SPEC-3 section 1 "Linking rules", every combination of provider, what the provider says of the email, the
// state of the account holding that email, entry point and policy, through the real routes: the outcome is the
// one the SPEC names, the exchange never links, and no identity with an unverified email is ever attached to an
// existing account except by the account's own signed-in owner (rule 2).
describeEachDatabase('linking matrix', (database) => {
  let idp: TestIdp;
  let github: TestGithub;
  const apps: Record<Policy, TestApp> = {} as Record<Policy, TestApp>;
  // The verified_email app registers newcomers; the explicit one does not (rule 4 both ways).
  const registration: Record<Policy, boolean> = { verified_email: true, explicit: false };

  beforeAll(async () => {
    [idp, github] = await Promise.all([startTestIdp(), startTestGithub()]);
    const callbacks: string[] = [];
    for (const policy of ['verified_email', 'explicit'] as const) {
      const port = await freePort();
      apps[policy] = await startTestApp({
        database,
        port,
        settings: {
          public_url: `http://127.0.0.1:${port}`,
          oauth_providers: 'acme,github',
          oauth_link_policy: policy,
          oauth_registration_enabled: registration[policy],
          ...{
            ...oidcSettings('acme', idp),
            oauth_github_issuer: github.url,
            oauth_github_client_id: github.clientId,
            oauth_github_client_secret: github.clientSecret,
          },
        },
      });
      callbacks.push(`http://127.0.0.1:${port}/api/auth/oauth/acme/callback`);
    }
    await idp.register(callbacks);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(Object.values(apps).map((app) => app.close()));
    await Promise.all([idp?.close(), github?.close()]);
  });

  /** Sets the provider's account `who` with the cell's email. */
  function providerAccount(cell: Cell, who: string, email: string, numericId: number): void {
    if (cell.provider === 'acme') {
      idp.accounts.set(who, {
        sub: who,
        ...(cell.email === 'absent' ? {} : { email, email_verified: cell.email === 'verified' }),
      });
    } else {
      github.accounts.set(who, {
        id: numericId,
        login: who,
        emails:
          cell.email === 'absent' ? [] : [{ email, primary: true, verified: cell.email === 'verified' }],
      });
    }
  }

  it('gives every cell the outcome SPEC-3 names, and never links an unverified identity by itself', async () => {
    const failures: string[] = [];
    await pool(CELLS, 8, async (cell, index) => {
      const app = apps[cell.policy];
      const at = cell.provider === 'acme' ? idp : github;
      const tag = `m${database.dialect}${index}`;
      const email = `${tag}@example.com`;
      const who = `${tag}-${cell.provider}`;
      // The existing account holding the email (or, for `none`, a user with another address), with a password
      // hashed once per app (the matrix is about linking, not hashing).
      const user = await insertUser(app, {
        username: `${tag}-owner`,
        email: cell.account === 'none' ? `${tag}-other@example.com` : email,
        verified: cell.account === 'verified' || cell.account === 'linked',
      });
      // Only a link needs the owner signed in.
      const signedIn = cell.entry === 'link' || cell.account === 'linked';
      const owner = signedIn ? await app.loginAs(user) : null;
      const identities = () => identityCount(app, user.id);
      if (owner && cell.account === 'linked') {
        // Already linked to another identity of the same provider (a link by the signed-in owner).
        const other = `${who}-prior`;
        providerAccount({ ...cell, email: 'verified' }, other, `${tag}-prior@example.com`, 900_000 + index);
        const link = await owner.post(`/api/auth/oauth/${cell.provider}/link`, {});
        const done = await socialSignIn(app.url, cell.provider, at, other, {
          start: { authorizationUrl: link.body.data.authorizationUrl, cookie: cookieOf(link.headers) },
        });
        if (done.fragment.svc_linked !== cell.provider) failures.push(`${tag}: prior link ${done.location}`);
      }
      const before = await identities();
      providerAccount(cell, who, email, 100_000 + index);
      let result: CallbackResult;
      if (owner && cell.entry === 'link') {
        const link = await owner.post(`/api/auth/oauth/${cell.provider}/link`, {});
        result = await socialSignIn(app.url, cell.provider, at, who, {
          start: { authorizationUrl: link.body.data.authorizationUrl, cookie: cookieOf(link.headers) },
        });
      } else {
        result = await socialSignIn(app.url, cell.provider, at, who);
      }
      const want = expected(cell, registration[cell.policy]);
      const name = `${tag} ${JSON.stringify(cell)}: wanted ${want}`;
      let outcome: string;
      if (result.fragment.svc_error) outcome = result.fragment.svc_error;
      else if (result.fragment.svc_linked) outcome = 'linked';
      else {
        // The exchange: one login, for the user the callback chose, linking nothing more.
        const countBeforeExchange = await identities();
        const res = await app.post('/api/auth/oauth/exchange', { code: result.fragment.svc_code });
        if (res.status !== 200) {
          failures.push(`${name}, exchange answered ${res.status} ${res.text}`);
          return;
        }
        const me = (await app.as(res.body.access_token).get('/api/auth/user')).body.data as { id: string };
        outcome = me.id === user.id ? 'login-existing' : 'register';
        if ((await identities()) !== countBeforeExchange)
          failures.push(`${name}: the exchange changed the owner's identities`);
      }
      if (outcome !== want) failures.push(`${name}, got ${outcome}`);
      const after = await identities();
      const gained = after - before;
      const shouldGain = want === 'linked' || want === 'login-existing' ? 1 : 0;
      if (gained !== shouldGain) failures.push(`${name}: the owner gained ${gained} identities`);
      // Zero links to an unverified identity by any path but the owner's own link (rule 2).
      if (cell.entry !== 'link' && cell.email !== 'verified' && gained !== 0)
        failures.push(`${name}: an unverified identity was linked to an existing account`);
    });
    expect(failures).toEqual([]);
  }, 120_000);

  it('refuses the exchange (401 auth.oauth_login_failed) when the identity was unlinked or the user deactivated meanwhile', async () => {
    const app = apps.verified_email;
    for (const change of ['unlink', 'deactivate'] as const) {
      const tag = `x${database.dialect}${change}`;
      const user = await app.createUser({ username: `${tag}-u`, email: `${tag}@example.com` });
      const owner = await app.loginAs(user);
      idp.accounts.set(tag, { sub: tag });
      const link = await owner.post('/api/auth/oauth/acme/link', {});
      await socialSignIn(app.url, 'acme', idp, tag, {
        start: { authorizationUrl: link.body.data.authorizationUrl, cookie: cookieOf(link.headers) },
      });
      const result = await socialSignIn(app.url, 'acme', idp, tag);
      expect(result.fragment.svc_code).toBeDefined();
      if (change === 'unlink') {
        const [identity] = (await owner.get('/api/auth/identities')).body.data;
        expect((await owner.delete(`/api/auth/identities/${identity.id}`)).status).toBe(204);
      } else {
        const admin = await app.loginAs(
          await app.createUser({ username: `${tag}-admin`, isSuperuser: true }),
        );
        expect((await admin.patch(`/api/admin/user/${user.id}`, { isActive: false })).status).toBe(200);
      }
      const res = await app.post('/api/auth/oauth/exchange', { code: result.fragment.svc_code });
      expect(res.status).toBe(401);
      expect(res.body.detail[0]).toMatchObject({ code: 'auth.oauth_login_failed' });
    }
  });
});

function cookieOf(headers: Headers): string {
  return headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_oauth_binding='))!
    .split(';')[0]!;
}

const hashes = new WeakMap<TestApp, Promise<string>>();

/** Inserts a user with the test password (hashed once per app) and, when `verified`, a verified email. */
async function insertUser(
  app: TestApp,
  input: { username: string; email: string; verified: boolean },
): Promise<{ id: string; username: string; password: string }> {
  const rt = app.app.runtime;
  if (!hashes.has(app)) hashes.set(app, rt.ports.get('loginGuard').hashPassword(DEFAULT_TEST_PASSWORD));
  const passwordHash = await hashes.get(app)!;
  const [row] = await rt.authDb.orm
    .insert(rt.tables.core.user)
    .values({
      username: input.username,
      email: input.email,
      passwordHash,
      emailVerifiedAt: input.verified ? new Date() : null,
    })
    .returning();
  return { id: row!.id, username: row!.username, password: DEFAULT_TEST_PASSWORD };
}

/** How many identities the user has, read from the table. */
async function identityCount(app: TestApp, userId: string): Promise<number> {
  const rt = app.app.runtime;
  const { userIdentity } = rt.tables['social-login'] as unknown as SocialLoginTables;
  const rows = await rt.authDb.orm.select().from(userIdentity).where(eq(userIdentity.userId, userId));
  return rows.length;
}
