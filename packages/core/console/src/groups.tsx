// Groups and permissions (SPEC-3 §6, SPEC "Permission management"): both lists with a search over their
// names, create a group or a permission, grant a permission to a group (`PUT /admin/permissions/groups/{id}`
// with the group's `permissionIds` plus the new one). The API answers every group at once (SPEC: not paginated);
// the page shows them a page at a time, the page in the URL like the other lists: each row holds a choice of
// every permission it lacks, and 1,000 groups of 200 permissions would be 200,000 options on one page.
import { useState, type FormEvent } from 'react';
import { call, type Group, type Permission } from './api.js';
import { t } from './i18n.js';
import { navigate, useLocation, withQuery } from './router.js';
import { PageSize, Pager, SearchForm, pagingOf, pagingInUrl } from './list.js';
import { ErrorMessage, Notice, useAction, useLoad } from './ui.js';

const PAGE_SIZES = [25, 50, 100];

export function GroupsPage() {
  const { query } = useLocation();
  const search = query.get('search') ?? '';
  const { page, pageSize } = pagingOf(query, PAGE_SIZES, 25);
  const go = (change: { search?: string; page?: number; pageSize?: number }) => {
    const next = { search, page, pageSize, ...change };
    navigate(
      withQuery('/groups', {
        search: next.search,
        ...pagingInUrl(next.page, next.pageSize, 25),
      }),
    );
  };
  const [round, setRound] = useState(0);
  const data = useLoad(`groups:${round}`, async (client) => {
    const [groups, permissions] = await Promise.all([
      call<Group[]>(client, 'GET', '/admin/permissions/groups'),
      call<Permission[]>(client, 'GET', '/admin/permissions/permissions'),
    ]);
    return { groups, permissions };
  });
  const reload = () => setRound((n) => n + 1);
  const needle = search.toLowerCase();
  const groups = (data.data?.groups ?? []).filter((group) => group.name.toLowerCase().includes(needle));
  const shown = groups.slice((page - 1) * pageSize, page * pageSize);
  const permissions = (data.data?.permissions ?? []).filter((permission) =>
    permission.codename.toLowerCase().includes(needle),
  );

  return (
    <>
      <h1>{t('groups')}</h1>
      <SearchForm search={search} onSearch={(text) => go({ search: text, page: 1 })}>
        <PageSize sizes={PAGE_SIZES} value={pageSize} onChange={(size) => go({ pageSize: size, page: 1 })} />
      </SearchForm>
      <ErrorMessage message={data.error} />
      <h2>{t('groups')}</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">{t('name')}</th>
            <th scope="col">{t('description')}</th>
            <th scope="col">{t('permissions')}</th>
            <th scope="col">{t('grant')}</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((group) => (
            <tr key={group.id}>
              <td>{group.name}</td>
              <td>{group.description}</td>
              <td>{group.permissions.map((permission) => permission.codename).join(', ') || t('none')}</td>
              <td>
                <Grant group={group} permissions={data.data?.permissions ?? []} onDone={reload} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {data.data && groups.length === 0 && <p>{t('noResults')}</p>}
      {data.data && (groups.length > pageSize || page > 1) && (
        <Pager
          page={page}
          pages={Math.ceil(groups.length / pageSize)}
          total={groups.length}
          go={(n) => go({ page: n })}
        />
      )}
      <CreateGroup onDone={reload} />
      <h2>{t('permissions')}</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">{t('codename')}</th>
            <th scope="col">{t('description')}</th>
          </tr>
        </thead>
        <tbody>
          {permissions.map((permission) => (
            <tr key={permission.id}>
              <td>
                <code>{permission.codename}</code>
              </td>
              <td>{permission.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {data.data && permissions.length === 0 && <p>{t('noResults')}</p>}
      <CreatePermission onDone={reload} />
    </>
  );
}

function Grant({ group, permissions, onDone }: { group: Group; permissions: Permission[]; onDone(): void }) {
  const { run, error, notice, busy } = useAction();
  const available = permissions.filter((permission) => !group.permissionIds.includes(permission.id));
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const id = Number(new FormData(event.currentTarget).get('permission'));
    const permission = permissions.find((candidate) => candidate.id === id);
    if (!permission) return;
    void run(async (client) => {
      await call(client, 'PUT', `/admin/permissions/groups/${group.id}`, {
        body: { permissionIds: [...group.permissionIds, id] },
      });
      onDone();
      return t('granted', { permission: permission.codename, name: group.name });
    });
  };
  return (
    <form className="inline" onSubmit={onSubmit} aria-label={t('grantTo', { name: group.name })}>
      <label>
        {t('permission')}
        <select name="permission" required defaultValue="">
          <option value="" disabled>
            {t('choose')}
          </option>
          {available.map((permission) => (
            <option key={permission.id} value={permission.id}>
              {permission.codename}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={busy || available.length === 0}>
        {t('grant')}
      </button>
      <ErrorMessage message={error} />
      {notice && <Notice message={notice} />}
    </form>
  );
}

function CreateGroup({ onDone }: { onDone(): void }) {
  const { run, error, notice, busy } = useAction();
  const [round, setRound] = useState(0);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const name = String(form.get('name') ?? '').trim();
    void run(async (client) => {
      await call(client, 'POST', '/admin/permissions/groups', {
        body: { name, description: String(form.get('description') ?? ''), permissionIds: [] },
      });
      setRound((n) => n + 1);
      onDone();
      return t('created', { name });
    });
  };
  return (
    <section aria-labelledby="create-group">
      <h2 id="create-group">{t('createGroup')}</h2>
      <form className="inline" onSubmit={onSubmit} key={round}>
        <label>
          {t('name')}
          <input name="name" required autoComplete="off" />
        </label>
        <label>
          {t('description')}
          <input name="description" autoComplete="off" />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('createGroup')}
        </button>
      </form>
      <ErrorMessage message={error} />
      <Notice message={notice} />
    </section>
  );
}

function CreatePermission({ onDone }: { onDone(): void }) {
  const { run, error, notice, busy } = useAction();
  const [round, setRound] = useState(0);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const codename = String(form.get('codename') ?? '').trim();
    void run(async (client) => {
      await call(client, 'POST', '/admin/permissions/permissions', {
        body: { codename, description: String(form.get('description') ?? '') },
      });
      setRound((n) => n + 1);
      onDone();
      return t('created', { name: codename });
    });
  };
  return (
    <section aria-labelledby="create-permission">
      <h2 id="create-permission">{t('createPermission')}</h2>
      <form className="inline" onSubmit={onSubmit} key={round}>
        <label>
          {t('codename')}
          <input name="codename" required autoComplete="off" />
        </label>
        <label>
          {t('description')}
          <input name="description" autoComplete="off" />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('createPermission')}
        </button>
      </form>
      <ErrorMessage message={error} />
      <Notice message={notice} />
    </section>
  );
}
