// A user's groups, direct permissions and effective permissions on their page (SPEC "Permission management"):
// `PUT /admin/permissions/users/{id}/groups` and `/permissions` replace the whole list, so adding or removing
// one sends the list as the server last gave it with that one changed; the effective permissions are read again
// after each change.
import { useState, type FormEvent } from 'react';
import { call, type Group, type Permission } from './api.js';
import { useConfirm } from './confirm.js';
import { t } from './i18n.js';
import { ErrorMessage, Notice, useAction, useLoad } from './ui.js';

export function UserPermissions({ id, name }: { id: string; name: string }) {
  const base = `/admin/permissions/users/${encodeURIComponent(id)}`;
  const [changes, setChanges] = useState(0);
  const data = useLoad(`perms:${id}:${changes}`, async (client) => {
    const [groups, direct, effective, allGroups, allPermissions] = await Promise.all([
      call<Group[]>(client, 'GET', `${base}/groups`),
      call<Permission[]>(client, 'GET', `${base}/permissions`),
      call<{ permissions: string[] }>(client, 'GET', `${base}/effective`),
      call<Group[]>(client, 'GET', '/admin/permissions/groups'),
      call<Permission[]>(client, 'GET', '/admin/permissions/permissions'),
    ]);
    return { groups, direct, effective: effective.permissions, allGroups, allPermissions };
  });
  const groupAction = useAction();
  const permissionAction = useAction();
  const confirm = useConfirm();

  const setGroups = (groupIds: number[], done: string) =>
    void groupAction.run(async (client) => {
      await call(client, 'PUT', `${base}/groups`, { body: { groupIds } });
      setChanges((n) => n + 1);
      return done;
    });
  const setPermissions = (permissionIds: number[], done: string) =>
    void permissionAction.run(async (client) => {
      await call(client, 'PUT', `${base}/permissions`, { body: { permissionIds } });
      setChanges((n) => n + 1);
      return done;
    });

  const d = data.data;
  const groupIds = d?.groups.map((group) => group.id) ?? [];
  const permissionIds = d?.direct.map((permission) => permission.id) ?? [];
  const onAddGroup = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const chosen = Number(new FormData(event.currentTarget).get('groupId'));
    const group = d?.allGroups.find((candidate) => candidate.id === chosen);
    if (group) setGroups([...groupIds, group.id], t('added', { group: group.name }));
  };
  const onGrant = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const chosen = Number(new FormData(event.currentTarget).get('permissionId'));
    const permission = d?.allPermissions.find((candidate) => candidate.id === chosen);
    if (permission)
      setPermissions(
        [...permissionIds, permission.id],
        t('grantedDirect', { permission: permission.codename }),
      );
  };

  return (
    <section aria-labelledby="permissions">
      <h2 id="permissions">{t('userGroups')}</h2>
      <ErrorMessage message={data.error} />
      {d && (
        <>
          <ul className="chips">
            {d.groups.map((group) => (
              <li key={group.id}>
                {group.name}{' '}
                <button
                  type="button"
                  className="danger"
                  aria-label={t('removeFromGroup', { group: group.name })}
                  onClick={() =>
                    confirm.ask(t('confirmRemoveFromGroup', { name, group: group.name }), t('remove'), () =>
                      setGroups(
                        groupIds.filter((other) => other !== group.id),
                        t('removedFromGroup', { group: group.name }),
                      ),
                    )
                  }
                >
                  {t('remove')}
                </button>
              </li>
            ))}
          </ul>
          {d.groups.length === 0 && <p>{t('none')}</p>}
          <form className="inline" aria-label={t('addToGroup')} onSubmit={onAddGroup} key={`g${changes}`}>
            <label>
              {t('group')}
              <select name="groupId" required defaultValue="">
                <option value="">{t('choose')}</option>
                {d.allGroups
                  .filter((group) => !groupIds.includes(group.id))
                  .map((group) => (
                    <option key={group.id} value={group.id}>
                      {group.name}
                    </option>
                  ))}
              </select>
            </label>
            <button type="submit" disabled={groupAction.busy}>
              {t('addToGroup')}
            </button>
          </form>
          <ErrorMessage message={groupAction.error} />
          <Notice message={groupAction.notice} />

          <h2 id="direct-permissions">{t('directPermissions')}</h2>
          <ul className="chips">
            {d.direct.map((permission) => (
              <li key={permission.id}>
                <code>{permission.codename}</code>{' '}
                <button
                  type="button"
                  className="danger"
                  aria-label={t('revokePermission', { permission: permission.codename })}
                  onClick={() =>
                    confirm.ask(
                      t('confirmRevokePermission', { name, permission: permission.codename }),
                      t('revoke'),
                      () =>
                        setPermissions(
                          permissionIds.filter((other) => other !== permission.id),
                          t('permissionRevoked', { permission: permission.codename }),
                        ),
                    )
                  }
                >
                  {t('revoke')}
                </button>
              </li>
            ))}
          </ul>
          {d.direct.length === 0 && <p>{t('none')}</p>}
          <form className="inline" aria-label={t('grantPermission')} onSubmit={onGrant} key={`p${changes}`}>
            <label>
              {t('permission')}
              <select name="permissionId" required defaultValue="">
                <option value="">{t('choose')}</option>
                {d.allPermissions
                  .filter((permission) => !permissionIds.includes(permission.id))
                  .map((permission) => (
                    <option key={permission.id} value={permission.id}>
                      {permission.codename}
                    </option>
                  ))}
              </select>
            </label>
            <button type="submit" disabled={permissionAction.busy}>
              {t('grantPermission')}
            </button>
          </form>
          <ErrorMessage message={permissionAction.error} />
          <Notice message={permissionAction.notice} />

          <h2 id="effective-permissions">{t('effectivePermissions')}</h2>
          <p>{d.effective.length ? <code>{d.effective.join(', ')}</code> : t('none')}</p>
        </>
      )}
      {confirm.dialog}
    </section>
  );
}
