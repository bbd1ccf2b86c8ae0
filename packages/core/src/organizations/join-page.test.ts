import { eq } from 'drizzle-orm';
import { dbOf } from '../../../../testing/mfa.js';
import type { OrganizationInvitationMail } from '../kernel/ports.js';
import { describeEachDatabase, startTestApp, type LoggedInClient, type TestApp } from '../testing/index.js';
import { organizationMailer } from '../../../../testing/mailer.js';

// SPEC-3 §2: the account page `GET /account/join-organization` accepts "for the browser's cookie session
// (section 5) when there is one, else after the page's own username and password fields"; SPEC-3 §5: a form of
// the account pages carries the CSRF token in the hidden field `csrfToken`. Real cookies over real HTTP: the
// session cookies come from `POST /auth/session`, as a browser gets them.

const ORIGIN = 'https://app.example.com';
const PAGE = '/account/join-organization';

/** A browser's cookie jar (every cookie sent back; the page and the API share the origin). */
class Jar {
  readonly values = new Map<string, string>();
  take(res: { headers: Headers }): void {
    for (const line of res.headers.getSetCookie()) {
      const name = line.slice(0, line.indexOf('='));
      this.values.set(name, line.slice(name.length + 1, line.indexOf(';')));
    }
  }
  get header(): string {
    return [...this.values].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** The value of the hidden `csrfToken` field of a page. */
const csrfField = (html: string) => /name="csrfToken" value="([^"]+)"/.exec(html)?.[1];

describeEachDatabase('The join page and the cookie session', (database) => {
  let app: TestApp;
  let owner: LoggedInClient;
  let orgId = '';
  const mails: OrganizationInvitationMail[] = [];

  async function person(username: string) {
    const created = await app.createUser({ username, email: `${username}@example.com` });
    const { orm, core } = dbOf(app);
    await orm.update(core.user).set({ emailVerifiedAt: new Date() }).where(eq(core.user.id, created.id));
    return created;
  }
  async function invite(email: string): Promise<string> {
    const res = await owner.post(`/api/organizations/${orgId}/invitations`, { email, role: 'member' });
    expect(res.status).toBe(201);
    return new URL(mails.at(-1)!.url).searchParams.get('token')!;
  }
  /** A browser signed in by `POST /auth/session` (its cookies in the jar). */
  async function signedIn(username: string, password: string): Promise<Jar> {
    const jar = new Jar();
    const res = await fetch(`${app.url}/api/auth/session`, {
      method: 'POST',
      headers: { Origin: ORIGIN, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username, password }),
    });
    expect(res.status).toBe(200);
    jar.take(res);
    expect([...jar.values.keys()].sort()).toEqual([
      '__Host-svc_csrf',
      '__Host-svc_session',
      '__Secure-svc_refresh',
    ]);
    return jar;
  }
  const open = (token: string, jar?: Jar) =>
    fetch(`${app.url}${PAGE}?token=${encodeURIComponent(token)}`, {
      headers: jar ? { Cookie: jar.header } : {},
    });
  const submit = (fields: Record<string, string>, jar?: Jar) =>
    fetch(`${app.url}${PAGE}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        ...(jar ? { Cookie: jar.header } : {}),
      },
      body: new URLSearchParams(fields),
    });
  const roleIn = async (client: LoggedInClient) => {
    const res = await client.get(`/api/organizations/${orgId}`);
    return res.status === 200 ? (res.body.data.role as string) : res.status;
  };

  beforeAll(async () => {
    app = await startTestApp({
      database,
      mailer: organizationMailer(mails),
      settings: {
        organizations_enabled: true,
        account_pages_enabled: true,
        cookie_sessions_enabled: true,
        public_url: ORIGIN,
      },
    });
    owner = await app.loginAs(await person('jp_owner'));
    const created = await owner.post('/api/organizations', { name: 'Join Co', slug: 'join-co' });
    expect(created.status).toBe(201);
    orgId = created.body.data.id;
  });
  afterAll(() => app.close());

  it('shows the signed-in user and accepts for the cookie session without asking for a password', async () => {
    const dana = await person('jp_dana');
    const jar = await signedIn('jp_dana', dana.password);
    const token = await invite('jp_dana@example.com');

    const page = await open(token, jar);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('Join Co');
    expect(html).toContain('You are signed in as jp_dana.');
    // The browser's CSRF cookie is the form's token; no new cookie is set.
    expect(csrfField(html)).toBe(jar.values.get('__Host-svc_csrf'));
    expect(page.headers.getSetCookie()).toEqual([]);

    const done = await submit({ token, csrfToken: csrfField(html)! }, jar);
    const doneHtml = await done.text();
    expect([done.status, doneHtml.includes('role="status"')]).toEqual([200, true]);
    expect(doneHtml).toContain('You are now a member of Join Co.');
    expect(await roleIn(await app.loginAs(dana))).toBe('member');
  });

  it('refuses a submit for the cookie session without the CSRF token (403 auth.csrf_failed), leaving the invitation usable', async () => {
    const erik = await person('jp_erik');
    const jar = await signedIn('jp_erik', erik.password);
    const token = await invite('jp_erik@example.com');
    const forged = await submit({ token }, jar);
    expect(forged.status).toBe(403);
    const wrong = await submit({ token, csrfToken: 'not-the-cookie' }, jar);
    expect(wrong.status).toBe(403);
    // Without the CSRF cookie the browser proved nothing: the session is not used, the page asks for its fields.
    const session = jar.values.get('__Host-svc_session')!;
    const noCsrf = await fetch(`${app.url}${PAGE}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Cookie: `__Host-svc_session=${session}`,
      },
      body: new URLSearchParams({ token }),
    });
    expect(noCsrf.status).toBe(400);
    expect(await noCsrf.text()).toContain('name="password"');
    const client = await app.loginAs(erik);
    expect(await roleIn(client)).toBe(404);
    expect((await client.post('/api/organizations/invitations/accept', { token })).status).toBe(200);
  });

  it('asks for the page’s own fields without a session, and with a session that is no longer valid', async () => {
    const fay = await person('jp_fay');
    const token = await invite('jp_fay@example.com');
    // A browser with no cookie at all: the page's fields, with the CSRF token it just set.
    const first = await open(token);
    const firstHtml = await first.text();
    expect(firstHtml).toContain('name="password"');
    expect(firstHtml).not.toContain('signed in as');
    const jar = new Jar();
    jar.take(first);
    expect(csrfField(firstHtml)).toBe(jar.values.get('__Host-svc_csrf'));

    // A session that ended (logged out elsewhere): its cookie is no session, the fields are asked for.
    const ended = await signedIn('jp_fay', fay.password);
    const ending = await fetch(`${app.url}/api/auth/session`, {
      method: 'DELETE',
      headers: {
        Origin: ORIGIN,
        Cookie: ended.header,
        'X-CSRF-Token': ended.values.get('__Host-svc_csrf')!,
      },
    });
    expect(ending.status).toBe(204);
    const stale = await open(token, ended);
    const staleHtml = await stale.text();
    expect(staleHtml).toContain('name="password"');
    expect(staleHtml).not.toContain('signed in as');
    const noPassword = await submit({ token, csrfToken: csrfField(staleHtml)! }, ended);
    expect(noPassword.status).toBe(400);

    // The page's fields with the CSRF token of the form (SPEC-3 §5) accept.
    const ok = await submit(
      { token, username: 'jp_fay', password: fay.password, csrfToken: csrfField(firstHtml)! },
      jar,
    );
    expect([ok.status, (await ok.text()).includes('role="status"')]).toEqual([200, true]);
    expect(await roleIn(await app.loginAs(fay))).toBe('member');
  });

  it('signed in as another address: says so, and the page’s own fields accept for the invited account', async () => {
    const gus = await person('jp_gus');
    const hal = await person('jp_hal');
    const jar = await signedIn('jp_hal', hal.password);
    const token = await invite('jp_gus@example.com');
    const html = await (await open(token, jar)).text();
    const csrfToken = csrfField(html)!;
    const mismatch = await submit({ token, csrfToken }, jar);
    expect(mismatch.status).toBe(403);
    const mismatchHtml = await mismatch.text();
    expect(mismatchHtml).toContain('role="alert"');
    expect(mismatchHtml).toContain('name="password"');
    expect(await roleIn(await app.loginAs(hal))).toBe(404);
    const ok = await submit({ token, csrfToken, username: 'jp_gus', password: gus.password }, jar);
    expect(ok.status).toBe(200);
    expect(await roleIn(await app.loginAs(gus))).toBe('member');
    expect(await roleIn(await app.loginAs(hal))).toBe(404);
  });
});
