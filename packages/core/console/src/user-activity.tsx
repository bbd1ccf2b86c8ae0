// A user's recent activity on their page (SPEC "Audit routes"): the ten newest entries of
// `GET /admin/audit/activity?userId=`, and a link to the activity log page with that filter in its URL, where
// every other filter and the keyset paging apply.
import { call, type ActivityEntry } from './api.js';
import { t } from './i18n.js';
import { Link, withQuery } from './router.js';
import { ErrorMessage, formatTime, useLoad } from './ui.js';

const RECENT = 10;

export function UserActivity({ id, name, round }: { id: string; name: string; round: number }) {
  const data = useLoad(`activity:${id}:${round}`, (client) =>
    call<(ActivityEntry & { description?: string | null })[]>(client, 'GET', '/admin/audit/activity', {
      query: { userId: id, limit: RECENT },
    }),
  );
  return (
    <section aria-labelledby="activity">
      <h2 id="activity">{t('recentActivity')}</h2>
      <ErrorMessage message={data.error} />
      {data.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('time')}</th>
                <th scope="col">{t('method')}</th>
                <th scope="col">{t('path')}</th>
                <th scope="col">{t('status')}</th>
                <th scope="col">{t('description')}</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((entry) => (
                <tr key={entry.id}>
                  <td>{formatTime(entry.timestamp)}</td>
                  <td>{entry.method}</td>
                  <td>
                    <code>{entry.path}</code>
                  </td>
                  <td>{entry.statusCode}</td>
                  <td>{entry.description ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {data.data.length === 0 && <p>{t('noResults')}</p>}
          <p>
            <Link to={withQuery('/activity', { userId: id })}>{t('allActivity', { name })}</Link>
          </p>
        </>
      )}
    </section>
  );
}
