// The activity log (SPEC-3 §6, SPEC "Audit routes"): every filter of `GET /admin/audit/logs` (with SPEC-3 §4's
// `impersonatorId`), its sorts and keyset paging (`after`: the id of the last entry shown, docs/activity-log.md "Large logs"), all in the URL.
import type { FormEvent } from 'react';
import { call, type ActivityEntry, type Paged } from './api.js';
import { t, type TextKey } from './i18n.js';
import { navigate, useLocation, withQuery } from './router.js';
import { ErrorMessage, formatTime, useLoad } from './ui.js';

const FILTERS: { name: string; label: TextKey; type?: string }[] = [
  { name: 'search', label: 'search', type: 'search' },
  { name: 'userId', label: 'userId' },
  // SPEC-3 §4: the entries of impersonated sessions, by the superuser who impersonated.
  { name: 'impersonatorId', label: 'impersonatorId' },
  { name: 'method', label: 'method' },
  { name: 'statusCode', label: 'statusCode', type: 'number' },
  { name: 'pathContains', label: 'pathContains' },
  { name: 'dateFrom', label: 'dateFrom', type: 'date' },
  { name: 'dateTo', label: 'dateTo', type: 'date' },
];
const PAGE_SIZES = [2, 10, 25, 50, 100, 200];
const DEFAULT_PAGE_SIZE = 50;
/** SPEC "Audit routes" `orderBy`: the sorts offered, the default first. `after` pages on in any of them. */
const ORDERS: { value: string; label: TextKey }[] = [
  { value: '-timestamp', label: 'sortNewest' },
  { value: 'timestamp', label: 'sortOldest' },
  { value: '-durationMs', label: 'sortSlowest' },
  { value: 'username', label: 'sortUser' },
  { value: 'path', label: 'sortPath' },
  { value: '-statusCode', label: 'sortStatus' },
];
const DEFAULT_ORDER = '-timestamp';

/**
 * SPEC "Audit routes" `excludePaths`: absent, the server's `activity_log_exclude_paths` apply; present, they are
 * replaced by its substrings, and an empty value (`excludePaths=`) shows every path. The URL keeps it as the API
 * takes it, so `excludePaths=` survives there (withQuery and queryString leave empty values out).
 */
function withExcludePaths(path: string, excludePaths: string | null): string {
  if (excludePaths === null) return path;
  return `${path}${path.includes('?') ? '&' : '?'}excludePaths=${encodeURIComponent(excludePaths)}`;
}

export function ActivityPage() {
  const { query } = useLocation();
  const filters = Object.fromEntries(FILTERS.map((filter) => [filter.name, query.get(filter.name) ?? '']));
  const after = query.get('after') ?? '';
  const asked = query.get('orderBy') ?? '';
  const orderBy = ORDERS.some((order) => order.value === asked) ? asked : DEFAULT_ORDER;
  const excludePaths = query.get('excludePaths');
  const pageSize = PAGE_SIZES.includes(Number(query.get('pageSize')))
    ? Number(query.get('pageSize'))
    : DEFAULT_PAGE_SIZE;
  // What the URL keeps besides `after`: the filters and a page size other than the default.
  const kept = {
    ...filters,
    orderBy: orderBy === DEFAULT_ORDER ? undefined : orderBy,
    pageSize: pageSize === DEFAULT_PAGE_SIZE ? undefined : pageSize,
  };
  const at = (more: Record<string, string | number | undefined> = {}) =>
    withExcludePaths(withQuery('/activity', { ...kept, ...more }), excludePaths);
  const key = JSON.stringify({ filters, after, pageSize, orderBy, excludePaths });
  const list = useLoad(key, (client) =>
    call<Paged<ActivityEntry>>(client, 'GET', withExcludePaths('/admin/audit/logs', excludePaths), {
      query: { ...filters, after, pageSize, orderBy },
    }),
  );

  const onFilter = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const chosen = Number(form.get('pageSize'));
    const order = String(form.get('orderBy') ?? DEFAULT_ORDER);
    const excluded = String(form.get('excludePaths') ?? '').trim();
    navigate(
      withExcludePaths(
        withQuery('/activity', {
          ...Object.fromEntries(
            FILTERS.map((filter) => [filter.name, String(form.get(filter.name) ?? '').trim()]),
          ),
          orderBy: order === DEFAULT_ORDER ? undefined : order,
          pageSize: chosen === DEFAULT_PAGE_SIZE ? undefined : chosen,
        }),
        // Substrings of its own replace the default; none, with "Include the paths excluded by default", is `=`.
        excluded !== '' ? excluded : form.get('allPaths') ? '' : null,
      ),
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
          {t('excludePaths')}
          <input name="excludePaths" type="text" defaultValue={excludePaths ?? ''} autoComplete="off" />
        </label>
        <label className="check">
          <input name="allPaths" type="checkbox" defaultChecked={excludePaths !== null} />
          {t('allPaths')}
        </label>
        <label>
          {t('sortOrder')}
          <select name="orderBy" defaultValue={orderBy}>
            {ORDERS.map((order) => (
              <option key={order.value} value={order.value}>
                {t(order.label)}
              </option>
            ))}
          </select>
        </label>
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
            <button type="button" disabled={!after} onClick={() => navigate(at())}>
              {t('newest')}
            </button>
            <button
              type="button"
              disabled={!last || items.length < pageSize}
              onClick={() => last && navigate(at({ after: last.id }))}
            >
              {t('older')}
            </button>
          </div>
        </>
      )}
    </>
  );
}
