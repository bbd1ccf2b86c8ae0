// The users list (SPEC-3 §6): search (any part of username, email, first or last name: `GET /admin/user`'s
// `search`), sort by a column, page through; the state lives in the URL. Creating a user goes through
// `POST /auth/register` (the only public route that creates a user with a password; it needs
// `registration_enabled`, and the API's refusal is shown otherwise) and `PATCH /admin/user/{id}` for the flags.
import { useEffect, useState, type FormEvent } from 'react';
import { call, type AdminUser, type Paged } from './api.js';
import { t, type TextKey } from './i18n.js';
import { Link, navigate, useLocation, withQuery } from './router.js';
import { ErrorMessage, Notice, formatTime, markFirstPage, useAction, useLoad, yesNo } from './ui.js';
import { InviteUser } from './invite.js';
import { PageSize, Pager, SearchForm, pagingOf, pagingInUrl } from './list.js';

const COLUMNS: { key: string; label: TextKey }[] = [
  { key: 'username', label: 'username' },
  { key: 'email', label: 'email' },
  { key: 'firstName', label: 'firstName' },
  { key: 'lastName', label: 'lastName' },
  { key: 'isActive', label: 'active' },
  { key: 'isSuperuser', label: 'superuser' },
  { key: 'createdAt', label: 'createdAt' },
];
const PAGE_SIZES = [25, 50, 100, 200];

export function UsersPage() {
  const { query } = useLocation();
  const search = query.get('search') ?? '';
  const orderBy = query.get('orderBy') ?? '-createdAt';
  const { page, pageSize } = pagingOf(query, PAGE_SIZES, 25);
  const state = { search, orderBy, page, pageSize };
  const go = (change: Partial<typeof state>) => {
    const next = { ...state, ...change };
    navigate(
      withQuery('/users', {
        search: next.search,
        orderBy: next.orderBy === '-createdAt' ? undefined : next.orderBy,
        ...pagingInUrl(next.page, next.pageSize, 25),
      }),
    );
  };
  const list = useLoad(JSON.stringify(state), (client) =>
    call<Paged<AdminUser>>(client, 'GET', '/admin/user/', { query: state }),
  );
  useEffect(() => {
    if (list.data) markFirstPage();
  }, [list.data]);

  const sortState = (key: string) =>
    orderBy === key ? 'ascending' : orderBy === `-${key}` ? 'descending' : undefined;

  return (
    <>
      <h1>{t('users')}</h1>
      <SearchForm search={search} onSearch={(text) => go({ search: text, page: 1 })}>
        <PageSize sizes={PAGE_SIZES} value={pageSize} onChange={(size) => go({ pageSize: size, page: 1 })} />
      </SearchForm>
      <ErrorMessage message={list.error} />
      {list.data && (
        <>
          <table>
            <thead>
              <tr>
                {COLUMNS.map((column) => (
                  <th key={column.key} scope="col" aria-sort={sortState(column.key) ?? 'none'}>
                    <button
                      type="button"
                      onClick={() =>
                        go({ orderBy: orderBy === column.key ? `-${column.key}` : column.key, page: 1 })
                      }
                    >
                      {t(column.label)}
                      {sortState(column.key) === 'ascending' ? ' ▲' : sortState(column.key) ? ' ▼' : ''}
                      <span className="skip">{t('sortBy', { column: t(column.label) })}</span>
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((user) => (
                <tr key={user.id}>
                  <td>
                    <Link to={`/users/${encodeURIComponent(user.id)}`}>{user.username}</Link>
                  </td>
                  <td>{user.email ?? ''}</td>
                  <td>{user.firstName}</td>
                  <td>{user.lastName}</td>
                  <td>{yesNo(user.isActive)}</td>
                  <td>{yesNo(user.isSuperuser)}</td>
                  <td>{formatTime(user.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.items.length === 0 && <p>{t('noResults')}</p>}
          <Pager page={page} pages={list.data.pages} total={list.data.total} go={(to) => go({ page: to })} />
        </>
      )}
      <CreateUser onCreated={list.reload} />
      <InviteUser onInvited={list.reload} />
    </>
  );
}

function CreateUser({ onCreated }: { onCreated(): void }) {
  const { run, error, notice, busy } = useAction();
  const [round, setRound] = useState(0);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    void run(async (client) => {
      const created = await call<AdminUser>(client, 'POST', '/auth/register', {
        body: {
          username: text('username'),
          password: String(form.get('password') ?? ''),
          email: text('email') || undefined,
          firstName: text('firstName') || undefined,
          lastName: text('lastName') || undefined,
        },
      });
      const flags = { isStaff: form.get('isStaff') === 'on', isSuperuser: form.get('isSuperuser') === 'on' };
      if (flags.isStaff || flags.isSuperuser)
        await call(client, 'PATCH', `/admin/user/${encodeURIComponent(created.id)}`, { body: flags });
      setRound((n) => n + 1);
      onCreated();
      return t('created', { name: created.username });
    });
  };
  return (
    <section aria-labelledby="create-user">
      <h2 id="create-user">{t('createUser')}</h2>
      <form className="inline" onSubmit={onSubmit} key={round}>
        <label>
          {t('username')}
          <input name="username" required autoComplete="off" />
        </label>
        <label>
          {t('password')}
          <input name="password" type="password" required autoComplete="new-password" />
        </label>
        <label>
          {t('email')}
          <input name="email" type="email" autoComplete="off" />
        </label>
        <label>
          {t('firstName')}
          <input name="firstName" autoComplete="off" />
        </label>
        <label>
          {t('lastName')}
          <input name="lastName" autoComplete="off" />
        </label>
        <label className="check">
          <input name="isStaff" type="checkbox" />
          {t('staff')}
        </label>
        <label className="check">
          <input name="isSuperuser" type="checkbox" />
          {t('superuser')}
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('create')}
        </button>
      </form>
      <ErrorMessage message={error} />
      <Notice message={notice} />
    </section>
  );
}
