// A user's page (SPEC-3 §6): the profile, the flags (`PATCH /admin/user/{id}`), deactivate, delete after a
// confirmation (`DELETE /admin/user/{id}`), the groups and the effective permissions.
import { useState, type FormEvent } from 'react';
import { call, type AdminUser, type Group } from './api.js';
import { t } from './i18n.js';
import type { Features } from './main.js';
import { Link, navigate } from './router.js';
import { ErrorMessage, Notice, formatTime, useAction, useLoad } from './ui.js';

export function UserPage({ id, features }: { id: string; features: Features }) {
  const path = `/admin/user/${encodeURIComponent(id)}`;
  const user = useLoad(`user:${id}`, (client) => call<AdminUser>(client, 'GET', path));
  const action = useAction();
  const [confirming, setConfirming] = useState(false);

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
  const setActive = (isActive: boolean) =>
    void action.run(async (client) => {
      await call(client, 'PATCH', path, { body: { isActive } });
      user.reload();
      return t('saved');
    });
  const remove = (name: string) =>
    void action.run(async (client) => {
      await call(client, 'DELETE', path);
      navigate('/users');
      return t('deleted', { name });
    });

  const u = user.data;
  return (
    <>
      <p>
        <Link to="/users">{t('back')}</Link>
      </p>
      <ErrorMessage message={user.error} />
      {u && (
        <>
          <h1>{u.username}</h1>
          <h2>{t('profile')}</h2>
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
          <h2 id="flags">{t('flags')}</h2>
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
          <div className="toolbar">
            <button type="button" disabled={action.busy} onClick={() => setActive(!u.isActive)}>
              {u.isActive ? t('deactivate') : t('activate')}
            </button>
            <button type="button" className="danger" onClick={() => setConfirming(true)}>
              {t('deleteUser')}
            </button>
          </div>
          {confirming && (
            <div className="confirm" role="alertdialog" aria-labelledby="confirm-text">
              <p id="confirm-text">{t('confirmDelete', { name: u.username })}</p>
              <button type="button" className="danger" onClick={() => remove(u.username)}>
                {t('confirmDeleteButton')}
              </button>{' '}
              <button type="button" autoFocus onClick={() => setConfirming(false)}>
                {t('cancel')}
              </button>
            </div>
          )}
          <ErrorMessage message={action.error} />
          <Notice message={action.notice} />
          {features.permissions && <UserPermissions id={id} />}
        </>
      )}
    </>
  );
}

function UserPermissions({ id }: { id: string }) {
  const data = useLoad(`perms:${id}`, async (client) => {
    const base = `/admin/permissions/users/${encodeURIComponent(id)}`;
    const [groups, effective] = await Promise.all([
      call<Group[]>(client, 'GET', `${base}/groups`),
      call<{ permissions: string[] }>(client, 'GET', `${base}/effective`),
    ]);
    return { groups, effective: effective.permissions };
  });
  return (
    <>
      <ErrorMessage message={data.error} />
      {data.data && (
        <>
          <h2>{t('userGroups')}</h2>
          <p>{data.data.groups.map((group) => group.name).join(', ') || t('none')}</p>
          <h2>{t('effectivePermissions')}</h2>
          <p>{data.data.effective.join(', ') || t('none')}</p>
        </>
      )}
    </>
  );
}
