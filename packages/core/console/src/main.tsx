// The admin console (SPEC-3 §6, docs/admin-console.md): a single-page application for superusers on
// @svc/client (in cookie mode where cookie sessions are on) on the API's own origin and @svc/react.
import { StrictMode, useEffect, useRef, useState, type FormEvent } from 'react';
import { createRoot } from 'react-dom/client';
import { createClient, sessionTokenStorage, SvcApiError, type SvcClient } from '@svc/client';
import { SvcProvider, useSession } from '@svc/react';
import { locale, t } from './i18n.js';
import { API_BASE, call, messageOf } from './api.js';
import { Link, useLocation } from './router.js';
import { UsersPage } from './users.js';
import { UserPage } from './user.js';
import { GroupsPage } from './groups.js';
import { ActivityPage } from './activity.js';
import { HealthPage } from './health.js';
import { ErrorMessage, firstPageShown } from './ui.js';
import { OrganizationPage, OrganizationsPage } from './organizations.js';
import { WebhookPage, WebhooksPage } from './webhooks.js';
import { AppearancePage, applyAppearance, readAppearance, type Appearance } from './appearance.js';

document.documentElement.lang = locale;
document.title = t('appName');

/**
 * How the page holds its session, as the server wrote it into the page (kernel/http/admin-console.ts): the
 * HttpOnly cookies of SPEC-3 §5 where `cookie_sessions_enabled` mounts their routes, else bearer tokens.
 */
const SESSION =
  document.querySelector('meta[name="svc-session"]')?.getAttribute('content') === 'bearer'
    ? 'bearer'
    : 'cookie';

/**
 * Whether the passkey routes are mounted (SPEC-2 section 6, `passkeys_enabled`): before sign-in, an anonymous
 * `GET /auth/passkeys` answers 401 where they are and the uniform 404 where they are not. No session is
 * sent, no challenge is made and nothing counts against a rate limit.
 */
async function passkeysMounted(): Promise<boolean> {
  try {
    const response = await fetch(`${API_BASE}/auth/passkeys`, { credentials: 'omit' });
    return response.status !== 404;
  } catch {
    return false;
  }
}

/**
 * A sign-in form. `refusal` says why the last user was let out (not a superuser) until `onAttempt`, the start
 * of the next sign-in, clears it.
 */
function SignIn({ refusal, onAttempt }: { refusal: string | null; onAttempt: () => void }) {
  const { signIn, mfa, status, client } = useSession();
  const [passkeys, setPasskeys] = useState(false);
  useEffect(() => {
    let live = true;
    void passkeysMounted().then((mounted) => live && setPasskeys(mounted));
    return () => {
      live = false;
    };
  }, []);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), [status]);

  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    onAttempt();
    try {
      await action();
    } catch (caught) {
      // No cookie session route: the page was served before cookie sessions were switched off.
      if (SESSION === 'cookie' && caught instanceof SvcApiError && caught.status === 404)
        setError(t('cookiesOff'));
      else setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  const onPassword = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void run(() => signIn(String(form.get('username') ?? ''), String(form.get('password') ?? '')));
  };
  // SPEC-3 §6 "Sign-in ... by passkey": a discoverable credential, no username asked (SPEC-2 section 6); the
  // client's onSignedIn makes the session read the user, whose superuser flag decides as for a password.
  const onPasskey = () => void run(() => client.loginWithPasskey());
  const onCode = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void run(() => mfa!.verify(String(form.get('code') ?? '').trim()));
  };

  return (
    <main className="signin" id="content">
      {mfa ? (
        <>
          <h1>{t('mfaTitle')}</h1>
          <p className="muted">{t('mfaHint')}</p>
          <form onSubmit={onCode}>
            <label>
              {t('mfaCode')}
              <input ref={first} name="code" autoComplete="one-time-code" inputMode="numeric" required />
            </label>
            <ErrorMessage message={error} />
            <button type="submit" className="primary" disabled={busy}>
              {t('verify')}
            </button>
            <button type="button" onClick={() => mfa.cancel()}>
              {t('cancel')}
            </button>
            {passkeys && (
              <button type="button" disabled={busy} onClick={() => void run(() => mfa.verifyWithPasskey())}>
                {t('usePasskey')}
              </button>
            )}
          </form>
        </>
      ) : (
        <>
          <h1>{t('signInTitle')}</h1>
          <form onSubmit={onPassword}>
            <label>
              {t('username')}
              <input ref={first} name="username" autoComplete="username" required />
            </label>
            <label>
              {t('password')}
              <input name="password" type="password" autoComplete="current-password" required />
            </label>
            <ErrorMessage message={error ?? refusal} />
            <button type="submit" className="primary" disabled={busy}>
              {t('signIn')}
            </button>
          </form>
          {passkeys && (
            <div className="alternative">
              <p className="muted">{t('or')}</p>
              <button type="button" disabled={busy} onClick={onPasskey}>
                {t('signInWithPasskey')}
              </button>
            </div>
          )}
        </>
      )}
    </main>
  );
}

/** How long the feature reads wait for the first users list before they go anyway (it may fail or be slow). */
const FIRST_PAGE_WAIT_MS = 1000;

/** Which optional parts the server has mounted: a page of a switched-off feature is hidden (SPEC-3 §6). */
/** `GET /admin/features` (docs/admin-console.md "Which features are on"): each optional feature's admin routes. */
export interface ServerFeatures {
  activity: boolean;
  permissions: boolean;
  /** `organizations_enabled` (SPEC-3 §2). */
  organizations: boolean;
  /** A user's organizations on their page (`GET /admin/user/{id}/organizations`). */
  userOrganizations: boolean;
  /** `webhooks_enabled` (SPEC-3 §3). */
  webhooks: boolean;
  /** `DELETE /admin/user/{id}/mfa`. */
  mfaReset: boolean;
  /** `impersonation_enabled` (SPEC-3 §4). */
  impersonation: boolean;
  /** A user's passkeys on their page (`passkeys_enabled`). */
  passkeys: boolean;
}

export interface Features extends ServerFeatures {
  /** The user's appearance settings; null when the settings routes are not mounted (no Appearance page). */
  appearance: Appearance | null;
}

/** Nothing optional: what the console assumes when the server does not say (its features router disabled). */
const NO_FEATURES: ServerFeatures = {
  activity: false,
  permissions: false,
  organizations: false,
  userOrganizations: false,
  webhooks: false,
  mfaReset: false,
  impersonation: false,
  passkeys: false,
};

/**
 * One read that writes nothing: trying a write route to learn whether it is mounted would put a refused request
 * in the activity log on every page view (docs/admin-console.md "Which features are on").
 */
async function readFeatures(client: SvcClient): Promise<ServerFeatures> {
  try {
    return { ...NO_FEATURES, ...(await call<Partial<ServerFeatures>>(client, 'GET', '/admin/features')) };
  } catch (error) {
    if (error instanceof SvcApiError && error.status === 404) return NO_FEATURES;
    throw error;
  }
}

function Shell() {
  const { user, signOut, client } = useSession();
  const { path } = useLocation();
  const [features, setFeatures] = useState<Features | null>(null);
  useEffect(() => {
    let live = true;
    // One read of which optional features are on (which pages exist), beside the appearance. The users
    // list waits for neither, and on the users list they wait for it (at most a second): the first page
    // gets the server first (docs/performance.md "The admin console's size", its first-page budget).
    const onUsersList = /^\/admin\/?(users\/?)?$/.test(location.pathname);
    const first = onUsersList
      ? Promise.race([firstPageShown, new Promise((done) => setTimeout(done, FIRST_PAGE_WAIT_MS))])
      : Promise.resolve();
    // The appearance is read at once (a small read), so the first page shows in the user's theme.
    const appearance = readAppearance(client).then((read) => {
      if (live) applyAppearance(read);
      return read;
    });
    void first
      .then(() => Promise.all([readFeatures(client).catch(() => NO_FEATURES), appearance]))
      .then(([server, appearance]) => {
        if (live) setFeatures({ ...server, appearance });
      });
    return () => {
      live = false;
      applyAppearance(null);
    };
  }, [client]);

  const section = path.split('/')[1] || 'users';
  const nav: {
    to: string;
    key: 'users' | 'groups' | 'activity' | 'health' | 'organizations' | 'webhooks' | 'appearance';
    shown: boolean;
  }[] = [
    { to: '/users', key: 'users', shown: true },
    { to: '/groups', key: 'groups', shown: features?.permissions ?? false },
    { to: '/activity', key: 'activity', shown: features?.activity ?? false },
    { to: '/health', key: 'health', shown: true },
    { to: '/organizations', key: 'organizations', shown: features?.organizations ?? false },
    { to: '/webhooks', key: 'webhooks', shown: features?.webhooks ?? false },
    { to: '/appearance', key: 'appearance', shown: !!features?.appearance },
  ];
  const child = path.split('/')[2] ? decodeURIComponent(path.split('/')[2]!) : null;

  let page;
  // The users list (the first page) needs no feature read: shown at once (the "first page usable" budget).
  if (section === 'users' && !child) page = <UsersPage />;
  else if (!features) page = <p>{t('loading')}</p>;
  else if (section === 'organizations' && features.organizations)
    page = child ? <OrganizationPage id={child} /> : <OrganizationsPage />;
  else if (section === 'webhooks' && features.webhooks)
    page = child ? <WebhookPage id={child} /> : <WebhooksPage />;
  else if (section === 'appearance' && features.appearance)
    page = (
      <AppearancePage
        initial={features.appearance}
        onSaved={(appearance) => setFeatures((known) => known && { ...known, appearance })}
      />
    );
  else if (section === 'users' && path.split('/')[2])
    page = <UserPage id={decodeURIComponent(path.split('/')[2]!)} features={features} />;
  else if (section === 'groups' && features.permissions) page = <GroupsPage />;
  else if (section === 'activity' && features.activity) page = <ActivityPage />;
  else if (section === 'health') page = <HealthPage />;
  else page = <UsersPage />;

  return (
    <>
      <a className="skip" href="#content">
        {t('skipToContent')}
      </a>
      <header className="top">
        <span className="brand">{t('appName')}</span>
        <nav aria-label={t('mainNavigation')}>
          <ul>
            {/* "Users" (the first link, the first page) at once; the others once the server said which pages
                exist, after it, so no link moves under the pointer. */}
            {nav
              .filter((item) => (item.key === 'users' || features) && item.shown)
              .map((item) => (
                <li key={item.key}>
                  <Link to={item.to} current={section === item.key}>
                    {t(item.key)}
                  </Link>
                </li>
              ))}
          </ul>
        </nav>
        <div className="who">
          <span>{t('signedInAs', { name: user?.username ?? '' })}</span>
          <button type="button" onClick={() => void signOut()}>
            {t('signOut')}
          </button>
        </div>
      </header>
      <main id="content" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}

function App() {
  const { status, user, signOut } = useSession();
  const [refusal, setRefusal] = useState<string | null>(null);
  const notSuperuser = status === 'signed-in' && user !== null && !user.isSuperuser;
  useEffect(() => {
    // SPEC-3 §6: a user who is not a superuser is told so and not let in (their session ends here).
    if (notSuperuser) {
      setRefusal(t('notSuperuser'));
      void signOut();
    }
  }, [notSuperuser, signOut]);
  if (status === 'loading') return <p className="muted">{t('loading')}</p>;
  if (status === 'signed-in' && user?.isSuperuser) return <Shell />;
  return <SignIn refusal={refusal} onAttempt={() => setRefusal(null)} />;
}

const client =
  SESSION === 'cookie'
    ? createClient({ baseUrl: location.origin, apiBase: API_BASE, session: 'cookie' })
    : // The bearer pair in this tab's sessionStorage (docs/admin-console.md "Sign-in and the session"): a
      // reload keeps the superuser signed in, and no other tab of the origin (the project's own app) sees it.
      createClient({
        baseUrl: location.origin,
        apiBase: API_BASE,
        storage: sessionTokenStorage('svc.admin-console'),
        crossTab: false,
      });
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <SvcProvider client={client} events={false}>
      <App />
    </SvcProvider>
  </StrictMode>,
);
