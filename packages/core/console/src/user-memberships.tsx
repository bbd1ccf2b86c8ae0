// A user's passkeys (list, delete) and organizations (list, each linked to its page) on their page: svc's admin
// routes extending SPEC-3 §6 (docs/passkeys.md "Administration (svc extension)", docs/organizations.md). Each
// section is shown only while its feature is on (`GET /admin/features`).
import { useState } from 'react';
import { call } from './api.js';
import { useConfirm } from './confirm.js';
import { t } from './i18n.js';
import { Link } from './router.js';
import { ErrorMessage, Notice, formatTime, useAction, useLoad } from './ui.js';
import type { Passkey, UserMembership } from './user-api.js';

export function UserPasskeys({ id, name }: { id: string; name: string }) {
  const base = `/admin/user/${encodeURIComponent(id)}/passkeys`;
  const [changes, setChanges] = useState(0);
  const passkeys = useLoad(`passkeys:${id}:${changes}`, (client) => call<Passkey[]>(client, 'GET', base));
  const action = useAction();
  const confirm = useConfirm();
  const remove = (passkey: Passkey) =>
    void action.run(async (client) => {
      await call(client, 'DELETE', `${base}/${encodeURIComponent(passkey.id)}`);
      setChanges((n) => n + 1);
      return t('passkeyDeleted', { passkey: passkey.name });
    });
  return (
    <section aria-labelledby="passkeys">
      <h2 id="passkeys">{t('passkeys')}</h2>
      <ErrorMessage message={passkeys.error} />
      {passkeys.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('name')}</th>
                <th scope="col">{t('createdAt')}</th>
                <th scope="col">{t('lastUsedAt')}</th>
                <th scope="col">{t('deletePasskey')}</th>
              </tr>
            </thead>
            <tbody>
              {passkeys.data.map((passkey) => (
                <tr key={passkey.id}>
                  <td>{passkey.name}</td>
                  <td>{formatTime(passkey.createdAt)}</td>
                  <td>{passkey.lastUsedAt ? formatTime(passkey.lastUsedAt) : t('never')}</td>
                  <td>
                    <button
                      type="button"
                      className="danger"
                      disabled={action.busy}
                      aria-label={t('deletePasskeyNamed', { passkey: passkey.name })}
                      onClick={() =>
                        confirm.ask(
                          t('confirmDeletePasskey', { passkey: passkey.name, name }),
                          t('deletePasskey'),
                          () => remove(passkey),
                        )
                      }
                    >
                      {t('deletePasskey')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {passkeys.data.length === 0 && <p>{t('none')}</p>}
        </>
      )}
      <ErrorMessage message={action.error} />
      <Notice message={action.notice} />
      {confirm.dialog}
    </section>
  );
}

export function UserOrganizations({ id }: { id: string }) {
  const memberships = useLoad(`organizations:${id}`, (client) =>
    call<UserMembership[]>(client, 'GET', `/admin/user/${encodeURIComponent(id)}/organizations`),
  );
  return (
    <section aria-labelledby="organizations">
      <h2 id="organizations">{t('userOrganizations')}</h2>
      <ErrorMessage message={memberships.error} />
      {memberships.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('name')}</th>
                <th scope="col">{t('slug')}</th>
                <th scope="col">{t('role')}</th>
                <th scope="col">{t('joinedAt')}</th>
              </tr>
            </thead>
            <tbody>
              {memberships.data.map((membership) => (
                <tr key={membership.organization.id}>
                  <td>
                    <Link to={`/organizations/${encodeURIComponent(membership.organization.id)}`}>
                      {membership.organization.name}
                    </Link>
                  </td>
                  <td>
                    <code>{membership.organization.slug}</code>
                  </td>
                  <td>{membership.role}</td>
                  <td>{formatTime(membership.joinedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {memberships.data.length === 0 && <p>{t('none')}</p>}
        </>
      )}
    </section>
  );
}
