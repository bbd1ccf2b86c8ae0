// The admin console (SPEC-3 §6, docs/admin-console.md): a single-page application for superusers on
// @svc/client in cookie mode on the API's own origin and @svc/react.
import { StrictMode, useEffect, useRef, useState, type FormEvent } from 'react';
import { createRoot } from 'react-dom/client';
import { createClient, SvcApiError, type SvcClient } from '@svc/client';
import { SvcProvider, useSession } from '@svc/react';
import { locale, t } from './i18n.js';
import { call, messageOf } from './api.js';
import { Link, useLocation } from './router.js';
import { UsersPage } from './users.js';
import { UserPage } from './user.js';
import { GroupsPage } from './groups.js';
import { ActivityPage } from './activity.js';
import { HealthPage } from './health.js';
import { ErrorMessage } from './ui.js';

document.documentElement.lang = locale;
document.title = t('appName');

function SignIn({ refusal }: { refusal: string | null }) {
  const { signIn, mfa, status } = useSession();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), [status]);

  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (caught) {
      // No cookie session route: the server runs without cookie sessions (docs/admin-console.md).
      if (caught instanceof SvcApiError && caught.status === 404) setError(t('cookiesOff'));
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
        </>
      )}
    </main>
  );
}

/** Which optional parts the server has mounted: a page of a switched-off feature is hidden (SPEC-3 §6). */
export interface Features {
  activity: boolean;
  permissions: boolean;
}

async function probe(client: SvcClient, path: string): Promise<boolean> {
  try {
    await call(client, 'GET', path);
    return true;
  } catch (error) {
    return !(error instanceof SvcApiError && error.status === 404);
  }
}

function Shell() {
  const { user, signOut, client } = useSession();
  const { path } = useLocation();
  const [features, setFeatures] = useState<Features | null>(null);
  useEffect(() => {
    let live = true;
    void Promise.all([
      probe(client, '/admin/audit/activity?limit=1'),
      probe(client, '/admin/permissions/permissions'),
    ]).then(([activity, permissions]) => live && setFeatures({ activity, permissions }));
    return () => {
      live = false;
    };
  }, [client]);

  const section = path.split('/')[1] || 'users';
  const nav: { to: string; key: 'users' | 'groups' | 'activity' | 'health'; shown: boolean }[] = [
    { to: '/users', key: 'users', shown: true },
    { to: '/groups', key: 'groups', shown: features?.permissions ?? false },
    { to: '/activity', key: 'activity', shown: features?.activity ?? false },
    { to: '/health', key: 'health', shown: true },
  ];

  let page;
  if (!features) page = <p>{t('loading')}</p>;
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
            {/* Shown once the probes said which pages exist, so the links do not move under the pointer. */}
            {nav
              .filter((item) => features && item.shown)
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
  return <SignIn refusal={refusal} />;
}

const client = createClient({ baseUrl: location.origin, session: 'cookie' });
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <SvcProvider client={client} events={false}>
      <App />
    </SvcProvider>
  </StrictMode>,
);
