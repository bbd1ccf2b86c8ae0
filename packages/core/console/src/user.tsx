// One user's page (SPEC-3 §6): the profile and flags (`PATCH /admin/user/{id}`), a new password (the same
// route's `password`), the MFA reset (`DELETE /admin/user/{id}/mfa`), sessions, personal tokens and linked
// identities (user-access.tsx), groups and direct and effective permissions (user-permissions.tsx), the recent
// activity (user-activity.tsx), passkeys and organizations (user-memberships.tsx), impersonation with a reason
// (SPEC-3 §4), deactivate and delete. Each section of a feature the server has switched off is left out, as
// `GET /admin/features` says (read once at sign-in: opening a page writes nothing to the activity log).
import { useState, type FormEvent } from 'react';
import { call, type AdminUser } from './api.js';
import { useConfirm } from './confirm.js';
import { t } from './i18n.js';
import type { Features } from './main.js';
import { Link, navigate } from './router.js';
import { ErrorMessage, Notice, formatTime, useAction, useLoad } from './ui.js';
import type { ImpersonationToken } from './user-api.js';
import { UserAccess } from './user-access.js';
import { UserOrganizations, UserPasskeys } from './user-memberships.js';
import { UserPermissions } from './user-permissions.js';
import { UserActivity } from './user-activity.js';

export function UserPage({ id, features }: { id: string; features: Features }) {
  const path = `/admin/user/${encodeURIComponent(id)}`;
  const user = useLoad(`user:${id}`, (client) => call<AdminUser>(client, 'GET', path));
  const action = useAction();
  const confirm = useConfirm();
  // Bumped by an action that changes what another section shows (an impersonation adds a session).
  const [round, setRound] = useState(0);

  const onFlags = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body = {
      isActive: form.get('isActive') === 'on',
      isStaff: form.get('isStaff') === 'on',
      isSuperuser: form.get('isSuperuser') === 'on',
    };
    void action.run(async (client) => {
      await call(client, 'PATCH', path, { body });
      user.reload();
      return t('saved');
    });
  };
  // Not asked for (yet): "Activate" lets the user in again, though the sessions it ended stay ended.
  const setActive = (isActive: boolean) =>
    void action.run(async (client) => {
      await call(client, 'PATCH', path, { body: { isActive } });
      user.reload();
      setRound((n) => n + 1);
      return t('saved');
    });
  const remove = (name: string) =>
    void action.run(async (client) => {
      await call(client, 'DELETE', path);
      navigate('/users');
      return t('deleted', { name });
    });

  const u = user.data;
  const sections: { id: string; label: string; shown: boolean }[] = [
    { id: 'profile', label: t('profile'), shown: true },
    { id: 'password', label: t('password'), shown: true },
    { id: 'mfa', label: t('mfa'), shown: features.mfaReset },
    { id: 'access', label: t('sessions'), shown: true },
    { id: 'passkeys', label: t('passkeys'), shown: features.passkeys },
    { id: 'organizations', label: t('userOrganizations'), shown: features.userOrganizations },
    { id: 'permissions', label: t('userGroups'), shown: features.permissions },
    { id: 'activity', label: t('recentActivity'), shown: features.activity },
    { id: 'impersonation', label: t('impersonation'), shown: features.impersonation },
    { id: 'danger', label: t('dangerZone'), shown: true },
  ];
  return (
    <>
      <p>
        <Link to="/users">{t('back')}</Link>
      </p>
      <ErrorMessage message={user.error} />
      {u && (
        <>
          <h1>{u.username}</h1>
          <nav aria-label={t('onThisPage')} className="local">
            <ul>
              {sections
                .filter((section) => section.shown)
                .map((section) => (
                  <li key={section.id}>
                    <a href={`#${section.id}`}>{section.label}</a>
                  </li>
                ))}
            </ul>
          </nav>
          <section aria-labelledby="profile">
            <h2 id="profile">{t('profile')}</h2>
            <dl className="facts">
              <dt>{t('email')}</dt>
              <dd>{u.email ?? '—'}</dd>
              <dt>{t('firstName')}</dt>
              <dd>{u.firstName || '—'}</dd>
              <dt>{t('lastName')}</dt>
              <dd>{u.lastName || '—'}</dd>
              <dt>{t('createdAt')}</dt>
              <dd>{formatTime(u.createdAt)}</dd>
              <dt>{t('lastLoginAt')}</dt>
              <dd>{formatTime(u.lastLoginAt)}</dd>
              <dt>id</dt>
              <dd>
                <code>{u.id}</code>
              </dd>
            </dl>
            <h3 id="flags">{t('flags')}</h3>
            {/* Re-mounted with each read of the user, so the boxes show what the server holds. */}
            <form className="inline" aria-labelledby="flags" onSubmit={onFlags} key={JSON.stringify(u)}>
              <label className="check">
                <input name="isActive" type="checkbox" defaultChecked={u.isActive} />
                {t('active')}
              </label>
              <label className="check">
                <input name="isStaff" type="checkbox" defaultChecked={u.isStaff} />
                {t('staff')}
              </label>
              <label className="check">
                <input name="isSuperuser" type="checkbox" defaultChecked={u.isSuperuser} />
                {t('superuser')}
              </label>
              <button type="submit" className="primary" disabled={action.busy}>
                {t('save')}
              </button>
            </form>
            <ErrorMessage message={action.error} />
            <Notice message={action.notice} />
          </section>
          <SetPassword path={path} />
          {features.mfaReset && <ResetMfa path={path} name={u.username} />}
          <UserAccess id={id} name={u.username} round={round} />
          {features.passkeys && <UserPasskeys id={id} name={u.username} />}
          {features.userOrganizations && <UserOrganizations id={id} />}
          {features.permissions && <UserPermissions id={id} name={u.username} />}
          {features.activity && <UserActivity id={id} name={u.username} round={round} />}
          {features.impersonation && (
            <Impersonate path={path} name={u.username} onStarted={() => setRound((n) => n + 1)} />
          )}
          <section aria-labelledby="danger">
            <h2 id="danger">{t('dangerZone')}</h2>
            <div className="toolbar">
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  // Deactivating ends the user's sessions: asked first, like every destructive action (SPEC-3 §6).
                  u.isActive
                    ? confirm.ask(t('confirmDeactivate', { name: u.username }), t('deactivate'), () =>
                        setActive(false),
                      )
                    : setActive(true)
                }
              >
                {u.isActive ? t('deactivate') : t('activate')}
              </button>
              <button
                type="button"
                className="danger"
                onClick={() =>
                  confirm.ask(t('confirmDelete', { name: u.username }), t('confirmDeleteButton'), () =>
                    remove(u.username),
                  )
                }
              >
                {t('deleteUser')}
              </button>
            </div>
          </section>
          {confirm.dialog}
        </>
      )}
    </>
  );
}

/** `PATCH /admin/user/{id}` with `password`: the API checks it against the password rules and says why not. */
function SetPassword({ path }: { path: string }) {
  const { run, error, notice, busy } = useAction();
  const [round, setRound] = useState(0);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const password = String(new FormData(event.currentTarget).get('password') ?? '');
    void run(async (client) => {
      await call(client, 'PATCH', path, { body: { password } });
      setRound((n) => n + 1);
      return t('passwordSet');
    });
  };
  return (
    <section aria-labelledby="password">
      <h2 id="password">{t('password')}</h2>
      <form className="inline" onSubmit={onSubmit} key={round}>
        <label>
          {t('newPassword')}
          <input name="password" type="password" required autoComplete="new-password" />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('setPassword')}
        </button>
      </form>
      <ErrorMessage message={error} />
      <Notice message={notice} />
    </section>
  );
}

function ResetMfa({ path, name }: { path: string; name: string }) {
  const { run, error, notice, busy } = useAction();
  const confirm = useConfirm();
  return (
    <section aria-labelledby="mfa">
      <h2 id="mfa">{t('mfa')}</h2>
      <p className="muted">{t('mfaResetHint')}</p>
      <button
        type="button"
        className="danger"
        disabled={busy}
        onClick={() =>
          confirm.ask(
            t('confirmResetMfa', { name }),
            t('resetMfa'),
            () =>
              void run(async (client) => {
                await call(client, 'DELETE', `${path}/mfa`);
                return t('mfaReset');
              }),
          )
        }
      >
        {t('resetMfa')}
      </button>
      <ErrorMessage message={error} />
      <Notice message={notice} />
      {confirm.dialog}
    </section>
  );
}

/**
 * SPEC-3 §4 from the console (docs/admin-console.md "Impersonation"): the console starts the impersonation with
 * the reason and says so; the session it made shows in the sessions list, where revoking it ends it. The token
 * is never put on the page: it stays in memory, and "Copy the access token" hands it to the clipboard for use
 * as a bearer token in the project's own app or a script, until it expires (no refresh token).
 */
function Impersonate({ path, name, onStarted }: { path: string; name: string; onStarted(): void }) {
  const { run, error, notice, busy } = useAction();
  const [token, setToken] = useState<string | null>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const reason = String(new FormData(event.currentTarget).get('reason') ?? '').trim();
    setCopied(null);
    void run(async (client) => {
      const answer = await call<ImpersonationToken>(client, 'POST', `${path}/impersonate`, {
        body: { reason },
      });
      setToken(answer.access_token);
      setRound((n) => n + 1);
      onStarted();
      return t('impersonationStarted', { name, minutes: Math.round(answer.expires_in / 60) });
    });
  };
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(token ?? '');
      setCopied(t('tokenCopied'));
    } catch {
      setCopied(t('copyFailed'));
    }
  };
  return (
    <section aria-labelledby="impersonation">
      <h2 id="impersonation">{t('impersonation')}</h2>
      <p className="muted">{t('impersonationHint')}</p>
      <form className="inline" onSubmit={onSubmit} key={round}>
        <label>
          {t('reason')}
          <input name="reason" required maxLength={500} autoComplete="off" />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('impersonate')}
        </button>
      </form>
      <ErrorMessage message={error} />
      <Notice message={notice} />
      {token && (
        <p>
          <button type="button" onClick={() => void copy()}>
            {t('copyToken')}
          </button>{' '}
          <span role="status">{copied ?? ''}</span>
        </p>
      )}
    </section>
  );
}
