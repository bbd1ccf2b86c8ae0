// A user's ways in, on their page (SPEC-3 §6): sessions (SPEC-2 "Sessions": list, revoke one, revoke all, with
// SPEC-3 §7 rule 2's `includeTokens`), personal access tokens (SPEC-2: list, revoke) and linked identities
// (SPEC-3 §1: list, unlink). A list whose route is not mounted (the feature is off) is left out.
import { useState } from 'react';
import { call } from './api.js';
import { useConfirm } from './confirm.js';
import { t } from './i18n.js';
import { ErrorMessage, Notice, formatTime, useAction, useLoad } from './ui.js';
import { optional, type Identity, type PersonalToken, type Session } from './user-api.js';

export function UserAccess({ id, name, round }: { id: string; name: string; round: number }) {
  const base = `/admin/user/${encodeURIComponent(id)}`;
  const [changes, setChanges] = useState(0);
  const data = useLoad(`access:${id}:${round}:${changes}`, async (client) => {
    const [sessions, tokens, linked, providers] = await Promise.all([
      optional<Session[]>(client, `${base}/sessions`),
      optional<PersonalToken[]>(client, `${base}/tokens`),
      optional<Identity[]>(client, `${base}/identities`),
      optional<{ name: string }[]>(client, '/auth/oauth/providers'),
    ]);
    // The identity routes are mounted whatever the settings (docs/social-login.md): the section is shown while
    // a provider is enabled, or while the user still has an identity to unlink.
    const identities = linked && (linked.length > 0 || (providers?.length ?? 0) > 0) ? linked : null;
    return { sessions, tokens, identities };
  });
  const action = useAction();
  const confirm = useConfirm();
  const [includeTokens, setIncludeTokens] = useState(false);
  const act = (method: 'DELETE', path: string, done: string) =>
    void action.run(async (client) => {
      await call(client, method, path);
      setChanges((n) => n + 1);
      return done;
    });

  const { sessions, tokens, identities } = data.data ?? { sessions: null, tokens: null, identities: null };
  return (
    <>
      <ErrorMessage message={data.error} />
      {sessions && (
        <section aria-labelledby="access">
          <h2 id="access">{t('sessions')}</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('started')}</th>
                <th scope="col">{t('lastUsedAt')}</th>
                <th scope="col">{t('ipAddress')}</th>
                <th scope="col">{t('userAgent')}</th>
                <th scope="col">{t('impersonatedBy')}</th>
                <th scope="col">{t('revoke')}</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((session) => (
                <tr key={session.id}>
                  <td>{formatTime(session.createdAt)}</td>
                  <td>{formatTime(session.lastUsedAt)}</td>
                  <td>{session.ip}</td>
                  <td>{session.userAgent || '—'}</td>
                  <td>{session.impersonatedBy?.username ?? '—'}</td>
                  <td>
                    <button
                      type="button"
                      className="danger"
                      aria-label={t('revokeSession', { time: formatTime(session.createdAt) })}
                      onClick={() =>
                        confirm.ask(
                          t('confirmRevokeSession', { name, time: formatTime(session.createdAt) }),
                          t('revoke'),
                          () =>
                            act(
                              'DELETE',
                              `${base}/sessions/${encodeURIComponent(session.id)}`,
                              t('sessionRevoked'),
                            ),
                        )
                      }
                    >
                      {t('revoke')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {sessions.length === 0 && <p>{t('none')}</p>}
          <div className="toolbar">
            {tokens && (
              <label className="check">
                <input
                  type="checkbox"
                  checked={includeTokens}
                  onChange={(event) => setIncludeTokens(event.target.checked)}
                />
                {t('includeTokens')}
              </label>
            )}
            <button
              type="button"
              className="danger"
              disabled={action.busy}
              onClick={() =>
                confirm.ask(
                  t(includeTokens && tokens ? 'confirmRevokeAllTokens' : 'confirmRevokeAll', { name }),
                  t('revokeAllSessions'),
                  () =>
                    act(
                      'DELETE',
                      `${base}/sessions${includeTokens && tokens ? '?includeTokens=true' : ''}`,
                      t('sessionsRevoked'),
                    ),
                )
              }
            >
              {t('revokeAllSessions')}
            </button>
          </div>
        </section>
      )}
      {tokens && (
        <section aria-labelledby="tokens">
          <h2 id="tokens">{t('personalTokens')}</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('name')}</th>
                <th scope="col">{t('prefix')}</th>
                <th scope="col">{t('permissions')}</th>
                <th scope="col">{t('expiresAt')}</th>
                <th scope="col">{t('lastUsedAt')}</th>
                <th scope="col">{t('revoke')}</th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((token) => (
                <tr key={token.id}>
                  <td>{token.name}</td>
                  <td>
                    <code>{token.prefix}</code>
                  </td>
                  <td>
                    {[
                      ...(token.superuser ? [t('superuser')] : []),
                      ...(token.staff ? [t('staff')] : []),
                      ...token.permissions,
                    ].join(', ') || t('none')}
                  </td>
                  <td>{token.expiresAt ? formatTime(token.expiresAt) : t('never')}</td>
                  <td>{formatTime(token.lastUsedAt)}</td>
                  <td>
                    <button
                      type="button"
                      className="danger"
                      aria-label={t('revokeToken', { name: token.name })}
                      onClick={() =>
                        confirm.ask(t('confirmRevokeToken', { name, token: token.name }), t('revoke'), () =>
                          act(
                            'DELETE',
                            `${base}/tokens/${encodeURIComponent(token.id)}`,
                            t('tokenRevoked', { name: token.name }),
                          ),
                        )
                      }
                    >
                      {t('revoke')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {tokens.length === 0 && <p>{t('none')}</p>}
        </section>
      )}
      {identities && (
        <section aria-labelledby="identities">
          <h2 id="identities">{t('identities')}</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('provider')}</th>
                <th scope="col">{t('email')}</th>
                <th scope="col">{t('linkedAt')}</th>
                <th scope="col">{t('lastUsedAt')}</th>
                <th scope="col">{t('unlink')}</th>
              </tr>
            </thead>
            <tbody>
              {identities.map((identity) => (
                <tr key={identity.id}>
                  <td>{identity.provider}</td>
                  <td>{identity.email ?? '—'}</td>
                  <td>{formatTime(identity.createdAt)}</td>
                  <td>{formatTime(identity.lastUsedAt)}</td>
                  <td>
                    <button
                      type="button"
                      className="danger"
                      aria-label={t('unlinkIdentity', {
                        provider: identity.provider,
                        email: identity.email ?? identity.id,
                      })}
                      onClick={() =>
                        confirm.ask(
                          t('confirmUnlink', { name, provider: identity.provider }),
                          t('unlink'),
                          () =>
                            act(
                              'DELETE',
                              `${base}/identities/${encodeURIComponent(identity.id)}`,
                              t('identityUnlinked'),
                            ),
                        )
                      }
                    >
                      {t('unlink')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {identities.length === 0 && <p>{t('none')}</p>}
        </section>
      )}
      <ErrorMessage message={action.error} />
      <Notice message={action.notice} />
      {confirm.dialog}
    </>
  );
}
