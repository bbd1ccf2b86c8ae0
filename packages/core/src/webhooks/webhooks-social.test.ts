import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import jwt from 'jsonwebtoken';
import { freePort, runCli } from '../../../../testing/cli-process.js';
import { enrolTotp } from '../../../../testing/mfa.js';
import { oidcSettings, socialSignIn, startTestIdp, type TestIdp } from '../../../../testing/oidc.js';
import { eventually } from '../../../../testing/smtp.js';
import {
  startWebhookReceiver,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '../../../../testing/webhook-receiver.js';
import type { CoreTables } from '../kernel/db/tables.js';
import {
  describeEachDatabase,
  startTestApp,
  TEST_SECRET_KEY,
  type LoggedInClient,
  type TestApp,
} from '../testing/index.js';

const CLI_TIMEOUT_MS = 120_000;

/** The browser-binding cookie of a link answer, as the callback expects it back. */
function bindingOf(headers: Headers): string {
  return headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_oauth_binding='))!
    .split(';')[0]!;
}

/**
 * SPEC-3 §3 "Event types" for social login (SPEC-3 §1): `user.created` when a social login creates the account,
 * `identity.linked` / `identity.unlinked` `{userId, provider}` from every entry point (a login that links, a link,
 * the user and admin unlink routes, `svc users identities --unlink`), `user.login` with method `oauth`; no
 * token, code or secret in any body.
 */
describeEachDatabase('Webhooks: social login events', (database) => {
  let idp: TestIdp;
  let receiver: WebhookReceiver;
  let app: TestApp;
  let admin: LoggedInClient;
  let dir: string;
  const secrets: string[] = [];
  const tokens: string[] = [];

  beforeAll(async () => {
    [idp, receiver] = await Promise.all([startTestIdp(), startWebhookReceiver()]);
    const port = await freePort();
    app = await startTestApp({
      database,
      port,
      settings: {
        public_url: `http://127.0.0.1:${port}`,
        webhooks_enabled: true,
        webhooks_allow_private_targets: true,
        oauth_providers: 'acme',
        oauth_registration_enabled: true,
        mfa_enabled: true,
        // Per-provider settings are not in the static settings type (as in social-login.test.ts).
        ...oidcSettings('acme', idp),
      },
    });
    await idp.register([`${app.url}/api/auth/oauth/acme/callback`]);
    admin = await app.loginAs(await app.createUser({ username: 'sh_admin', isSuperuser: true }));
    const res = await admin.post('/api/admin/webhooks', { url: receiver.url('/all'), events: ['*'] });
    expect(res.status).toBe(201);
    secrets.push(res.body.data.secret, idp.clientSecret);
    // `svc users identities --unlink` on the same database, with webhooks on (it records; the app delivers).
    dir = mkdtempSync(join(tmpdir(), 'svc-social-hooks-'));
    writeFileSync(
      join(dir, '.env'),
      [
        `SVC_SECRET_KEY=${TEST_SECRET_KEY}`,
        `SVC_AUTH_DATABASE_URL=${database.url}`,
        'SVC_WEBHOOKS_ENABLED=true',
        'SVC_LOG_LEVEL=ERROR',
        '',
      ].join('\n'),
    );
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await Promise.all([idp?.close(), receiver?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const received = (type: string, userId: string) =>
    receiver
      .at('/all')
      .filter((r) => r.json?.type === type && (r.json.data.userId ?? r.json.data.id) === userId);
  /** Waits for the `n`th event of `type` about `userId`. */
  async function eventFor(type: string, userId: string, n = 1): Promise<ReceivedWebhook> {
    await eventually(() => received(type, userId).length >= n);
    return received(type, userId)[n - 1]!;
  }

  /** A social login through `sub` at the test provider, exchanged for tokens. */
  async function socialLogin(sub: string, account: Record<string, unknown>): Promise<string> {
    idp.accounts.set(sub, { sub, ...account });
    const result = await socialSignIn(app.url, 'acme', idp, sub);
    tokens.push(result.fragment.svc_code!);
    const res = await app.post('/api/auth/oauth/exchange', { code: result.fragment.svc_code });
    expect(res.status).toBe(200);
    tokens.push(res.body.access_token, res.body.refresh_token);
    return res.body.access_token as string;
  }

  async function linkAs(client: LoggedInClient, sub: string): Promise<void> {
    const link = await client.post('/api/auth/oauth/acme/link', {});
    expect(link.status).toBe(200);
    idp.accounts.set(sub, { sub });
    const result = await socialSignIn(app.url, 'acme', idp, sub, {
      start: { authorizationUrl: link.body.data.authorizationUrl, cookie: bindingOf(link.headers) },
    });
    expect(result.fragment).toEqual({ svc_linked: 'acme' });
  }

  it('a first social login emits user.created (as GET /admin/user/{id} shows it), identity.linked and user.login with method oauth', async () => {
    const token = await socialLogin('sh-new', {
      email: 'sh-new@example.com',
      email_verified: true,
      preferred_username: 'sh_newcomer',
      given_name: 'New',
    });
    const id = (await app.as(token).get('/api/auth/user')).body.data.id as string;
    const created = await eventFor('user.created', id);
    const shown = (await admin.get(`/api/admin/user/${id}`)).body.data;
    // Created before its first login: `lastLoginAt` is null in the event.
    expect(created.json).toEqual({
      id: created.headers['webhook-id'],
      type: 'user.created',
      timestamp: expect.stringMatching(/Z$/),
      data: { ...shown, lastLoginAt: null },
    });
    expect(created.json.data).toMatchObject({ username: 'sh_newcomer', firstName: 'New' });
    const linked = await eventFor('identity.linked', id);
    expect(linked.json.data).toEqual({ userId: id, provider: 'acme' });
    const login = await eventFor('user.login', id);
    expect(login.json.data).toEqual({
      userId: id,
      username: 'sh_newcomer',
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      method: 'oauth',
    });
  });

  it(
    'a login that links by verified email and a link started by the caller emit identity.linked; both unlink routes and the CLI emit identity.unlinked',
    async () => {
      // SPEC-3 §1 rule 3: an account with the same verified email gets the identity at its login.
      const user = await app.createUser({ username: 'sh_owner', email: 'sh-owner@example.com' });
      const rt = app.app.runtime;
      const core = rt.tables.core as unknown as CoreTables;
      await rt.authDb.orm
        .update(core.user)
        .set({ emailVerifiedAt: new Date() })
        .where(eq(core.user.id, user.id));
      await socialLogin('sh-by-email', { email: 'SH-Owner@example.com', email_verified: true });
      expect((await eventFor('identity.linked', user.id)).json.data).toEqual({
        userId: user.id,
        provider: 'acme',
      });
      expect(received('user.created', user.id)).toEqual([]);

      // Rule 2: a link started with POST .../link, then two more for the unlink routes and the CLI.
      const client = await app.loginAs(user);
      for (const sub of ['sh-link-1', 'sh-link-2']) await linkAs(client, sub);
      await eventFor('identity.linked', user.id, 3);
      const identities = (await client.get('/api/auth/identities')).body.data as { id: string }[];
      expect(identities).toHaveLength(3);
      const [first, second, third] = identities.map((i) => i.id);

      expect((await client.delete(`/api/auth/identities/${first}`)).status).toBe(204);
      expect((await eventFor('identity.unlinked', user.id)).json.data).toEqual({
        userId: user.id,
        provider: 'acme',
      });
      expect((await admin.delete(`/api/admin/user/${user.id}/identities/${second}`)).status).toBe(204);
      await eventFor('identity.unlinked', user.id, 2);
      const cli = await runCli(['--base-dir', dir, 'users', 'identities', 'sh_owner', '--unlink', third!]);
      expect(cli.code).toBe(0);
      const byCli = await eventFor('identity.unlinked', user.id, 3);
      expect(byCli.json.data).toEqual({ userId: user.id, provider: 'acme' });
      // A refused unlink records nothing.
      const again = await client.delete(`/api/auth/identities/${third}`);
      expect(again.status).toBe(404);
      expect(received('identity.linked', user.id)).toHaveLength(3);
      expect(received('identity.unlinked', user.id)).toHaveLength(3);
    },
    CLI_TIMEOUT_MS,
  );

  it('a social login completed by the MFA step emits user.login with method oauth, not password', async () => {
    const user = await app.createUser({ username: 'sh_mfa', email: 'sh-mfa@example.com' });
    await linkAs(await app.loginAs(user), 'sh-mfa-sub');
    const { backupCodes } = await enrolTotp(app, user);
    const result = await socialSignIn(app.url, 'acme', idp, 'sh-mfa-sub');
    const step = await app.post('/api/auth/oauth/exchange', { code: result.fragment.svc_code });
    expect(step.body).toEqual({ mfa_required: true, mfa_token: expect.any(String) });
    const res = await app.post('/api/mfa/verify', { mfa_token: step.body.mfa_token, code: backupCodes[0] });
    expect(res.status).toBe(200);
    tokens.push(
      result.fragment.svc_code!,
      step.body.mfa_token,
      res.body.access_token,
      res.body.refresh_token,
    );
    const sessionId = (jwt.decode(res.body.access_token) as { sid: string }).sid;
    const ofSession = () =>
      received('user.login', user.id).filter((r) => r.json.data.sessionId === sessionId);
    await eventually(() => ofSession().length === 1);
    expect(ofSession()[0]!.json.data).toEqual({
      userId: user.id,
      username: 'sh_mfa',
      sessionId,
      method: 'oauth',
    });
    // A password login's MFA step still reports `password`.
    const password = await app.post('/api/auth/token', undefined, {
      form: { username: 'sh_mfa', password: user.password },
    });
    const verified = await app.post('/api/mfa/verify', {
      mfa_token: password.body.mfa_token,
      code: backupCodes[1],
    });
    expect(verified.status).toBe(200);
    tokens.push(password.body.mfa_token, verified.body.access_token, verified.body.refresh_token);
    const passwordSid = (jwt.decode(verified.body.access_token) as { sid: string }).sid;
    await eventually(() =>
      received('user.login', user.id).some((r) => r.json.data.sessionId === passwordSid),
    );
    expect(
      received('user.login', user.id).find((r) => r.json.data.sessionId === passwordSid)!.json.data.method,
    ).toBe('password');
  });

  it('never puts a token, code or secret into a body', () => {
    const bodies = receiver.at('/all').map((r) => r.body);
    expect(bodies.some((b) => b.includes('"identity.unlinked"'))).toBe(true);
    for (const body of bodies) {
      expect(body).not.toMatch(/\$argon2|whsec_|eyJ[A-Za-z0-9_-]{10,}/);
      expect(body).not.toMatch(/password(Hash)?"\s*:|secret|token"\s*:|"code"|subject|issuer/i);
      for (const value of [...secrets, ...tokens]) expect(body).not.toContain(value);
    }
  });
});
