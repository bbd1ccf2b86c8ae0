// The activity log (SPEC-3 §6, SPEC "Audit routes"): every filter of `GET /admin/audit/logs` and keyset
// paging (`after`: the id of the last entry shown, docs/activity-log.md "Large logs"), all in the URL.
import type { FormEvent } from 'react';
import { call, type ActivityEntry, type Paged } from './api.js';
import { t, type TextKey } from './i18n.js';
import { navigate, useLocation, withQuery } from './router.js';
import { ErrorMessage, formatTime, useLoad } from './ui.js';

const FILTERS: { name: string; label: TextKey; type?: string }[] = [
  { name: 'search', label: 'search', type: 'search' },
  { name: 'userId', label: 'userId' },
  { name: 'method', label: 'method' },
  { name: 'statusCode', label: 'statusCode', type: 'number' },
  { name: 'pathContains', label: 'pathContains' },
  { name: 'dateFrom', label: 'dateFrom', type: 'date' },
  { name: 'dateTo', label: 'dateTo', type: 'date' },
];
const PAGE_SIZES = [2, 10, 25, 50, 100, 200];
const DEFAULT_PAGE_SIZE = 50;

export function ActivityPage() {
  const { query } = useLocation();
  const filters = Object.fromEntries(FILTERS.map((filter) => [filter.name, query.get(filter.name) ?? '']));
  const after = query.get('after') ?? '';
  const pageSize = PAGE_SIZES.includes(Number(query.get('pageSize')))
    ? Number(query.get('pageSize'))
    : DEFAULT_PAGE_SIZE;
  // What the URL keeps besides `after`: the filters and a page size other than the default.
  const kept = { ...filters, pageSize: pageSize === DEFAULT_PAGE_SIZE ? undefined : pageSize };
  const key = JSON.stringify({ filters, after, pageSize });
  const list = useLoad(key, (client) =>
    call<Paged<ActivityEntry>>(client, 'GET', '/admin/audit/logs', {
      query: { ...filters, after, pageSize },
    }),
  );

  const onFilter = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const chosen = Number(form.get('pageSize'));
    navigate(
      withQuery('/activity', {
        ...Object.fromEntries(
          FILTERS.map((filter) => [filter.name, String(form.get(filter.name) ?? '').trim()]),
        ),
        pageSize: chosen === DEFAULT_PAGE_SIZE ? undefined : chosen,
      }),
    );
  };
  const items = list.data?.items ?? [];
  const last = items[items.length - 1];

  return (
    <>
      <h1>{t('activity')}</h1>
      <form className="toolbar" role="search" onSubmit={onFilter} key={key}>
        {FILTERS.map((filter) => (
          <label key={filter.name}>
            {t(filter.label)}
            <input
              name={filter.name}
              type={filter.type ?? 'text'}
              defaultValue={filters[filter.name]}
              autoComplete="off"
            />
          </label>
        ))}
        <label>
          {t('pageSize')}
          <select name="pageSize" defaultValue={pageSize}>
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">{t('apply')}</button>
      </form>
      <ErrorMessage message={list.error} />
      {list.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('time')}</th>
                <th scope="col">{t('user')}</th>
                <th scope="col">{t('method')}</th>
                <th scope="col">{t('path')}</th>
                <th scope="col">{t('status')}</th>
                <th scope="col">{t('duration')}</th>
              </tr>
            </thead>
            <tbody>
              {items.map((entry) => (
                <tr key={entry.id}>
                  <td>{formatTime(entry.timestamp)}</td>
                  <td>{entry.username ?? '—'}</td>
                  <td>{entry.method}</td>
                  <td>
                    <code>{entry.path}</code>
                  </td>
                  <td>{entry.statusCode}</td>
                  <td>{entry.durationMs} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
          {items.length === 0 && <p>{t('noResults')}</p>}
          <div className="pager">
            <button type="button" disabled={!after} onClick={() => navigate(withQuery('/activity', kept))}>
              {t('newest')}
            </button>
            <button
              type="button"
              disabled={!last || items.length < pageSize}
              onClick={() => last && navigate(withQuery('/activity', { ...kept, after: last.id }))}
            >
              {t('older')}
            </button>
          </div>
        </>
      )}
    </>
  );
}
