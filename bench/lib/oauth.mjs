// docs/performance.md "Benchmark suite", row `oauth-exchange` (SPEC-3 §1 `POST /auth/oauth/exchange`): the
// single-use codes it spends. A code stands for a completed callback and lives 60 seconds in the server's cache
// (packages/core/src/social-login/flow-store.ts), which the bench cannot reach from outside with the in-process
// cache: each code is made the way a browser makes it, by the authorize redirect and the callback, against a
// loopback stand-in for GitHub's three endpoints (the `github` preset with `oauth_github_issuer`, as GitHub
// Enterprise Server is configured). The codes are made just before each round that spends them, never timed.
import { createServer } from 'node:http';
import { URL, URLSearchParams } from 'node:url';

/** The stand-in's accounts: `bench-gh-<n>`, each with a verified primary address. */
const ID_BASE = 100_000;

/**
 * GitHub's token endpoint and API on loopback: the code the callback trades is the account's number, its access
 * token `gho_<n>` (no PKCE check: the bench measures svc, not the provider).
 */
export async function startGithubStandIn() {
  const json = (res, body) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      let text = '';
      req.on('data', (d) => (text += d));
      req.on('end', () => {
        const n = Number(new URLSearchParams(text).get('code'));
        json(res, { access_token: `gho_${n}`, token_type: 'bearer', scope: 'read:user,user:email' });
      });
      return;
    }
    const n = Number(/^Bearer gho_(\d+)$/.exec(String(req.headers.authorization ?? ''))?.[1] ?? NaN);
    if (Number.isFinite(n) && url.pathname === '/api/v3/user') {
      json(res, { id: ID_BASE + n, login: `bench-gh-${n}`, name: null });
      return;
    }
    if (Number.isFinite(n) && url.pathname === '/api/v3/user/emails') {
      json(res, [{ email: `bench-gh-${n}@example.com`, primary: true, verified: true, visibility: null }]);
      return;
    }
    res.statusCode = 401;
    json(res, { message: 'Bad credentials' });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    /** The settings of a `svc serve` that signs in with it (registration on: the first code makes the user). */
    settings: {
      oauth_providers: 'github',
      oauth_github_issuer: url,
      oauth_github_client_id: 'bench-client',
      oauth_github_client_secret: 'bench-client-secret',
      oauth_registration_enabled: true,
    },
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** One `#svc_code`: the authorize redirect (its state and binding cookie), then the callback with account `n`. */
async function mintCode(base, n) {
  const start = await fetch(`${base}/api/auth/oauth/github/authorize?redirect_to=/`, { redirect: 'manual' });
  const state = new URL(start.headers.get('location')).searchParams.get('state');
  const cookie = start.headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_oauth_binding='))
    .split(';')[0];
  const back = await fetch(
    `${base}/api/auth/oauth/github/callback?code=${n}&state=${encodeURIComponent(state)}`,
    { headers: { cookie }, redirect: 'manual' },
  );
  const code = /#svc_code=([^&]+)/.exec(back.headers.get('location') ?? '')?.[1];
  if (!code) throw new Error(`the callback answered ${back.status} ${back.headers.get('location')}`);
  return decodeURIComponent(code);
}

/**
 * `count` exchange bodies `{"code": …}`, one code each, for accounts 0…users-1 in rotation (parallel exchanges
 * of one user would wait for each other at the account's login lock, as parallel logins would), made
 * `parallel` at a time.
 */
export async function mintExchangeBodies(base, count, users, parallel = 10) {
  const bodies = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        bodies[i] = JSON.stringify({ code: await mintCode(base, i % users) });
      }
    }),
  );
  return bodies;
}
