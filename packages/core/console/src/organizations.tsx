// Organizations (SPEC-3 §6 "organizations and their members", SPEC-3 §2): every organization
// (`GET /admin/organizations`, search over name and slug, paged; the state in the URL), create one
// (`POST /organizations`: the superuser becomes its owner, as SPEC-3 §2 says of every creator), and an
// organization's page: its members (`GET /organizations/{id}/members`, which superusers may call as owners
// do), their roles changed or removed (the API's `organization.last_owner` refusal shown as is), pending
// invitations, a member added by invitation (`POST /organizations/{id}/invitations`: SPEC-3 §2 has no route that
// adds a user directly; they join when they accept), and the deletion after a confirmation.
import { useState, type FormEvent } from 'react';
import { call, type Paged } from './api.js';
import { t } from './i18n.js';
import { Link, navigate, useLocation, withQuery } from './router.js';
import { useConfirm } from './confirm.js';
import { PageSize, Pager, SearchForm, pagingOf, pagingInUrl } from './list.js';
import { ErrorMessage, Notice, formatTime, useAction, useLoad } from './ui.js';

export interface Organization {
  id: string;
  slug: string;
  name: string;
  createdAt: string;
  memberCount?: number;
}

interface Member {
  userId: string;
  username: string;
  email: string | null;
  firstName: string;
  lastName: string;
  role: string;
  joinedAt: string;
}

interface Invitation {
  id: string;
  email: string;
  role: string;
  expiresAt: string;
  invitedBy: { id: string; username: string } | null;
  createdAt: string;
}

const PAGE_SIZES = [25, 50, 100];
/** SPEC-3 §2's roles; a project's own roles are typed in (the API answers `organization.role_invalid`). */
const ROLES = ['owner', 'admin', 'member'];

export function OrganizationsPage() {
  const { query } = useLocation();
  const search = query.get('search') ?? '';
  const { page, pageSize } = pagingOf(query, PAGE_SIZES, 25);
  const go = (change: { search?: string; page?: number; pageSize?: number }) => {
    const next = { search, page, pageSize, ...change };
    navigate(
      withQuery('/organizations', {
        search: next.search,
        ...pagingInUrl(next.page, next.pageSize, 25),
      }),
    );
  };
  const state = { search, page, pageSize };
  const list = useLoad(JSON.stringify(state), (client) =>
    call<Paged<Organization>>(client, 'GET', '/admin/organizations', { query: state }),
  );

  return (
    <>
      <h1>{t('organizations')}</h1>
      <SearchForm search={search} onSearch={(text) => go({ search: text, page: 1 })}>
        <PageSize sizes={PAGE_SIZES} value={pageSize} onChange={(size) => go({ pageSize: size, page: 1 })} />
      </SearchForm>
      <ErrorMessage message={list.error} />
      {list.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('name')}</th>
                <th scope="col">{t('slug')}</th>
                <th scope="col">{t('memberCount')}</th>
                <th scope="col">{t('createdAt')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((org) => (
                <tr key={org.id}>
                  <td>
                    <Link to={`/organizations/${encodeURIComponent(org.id)}`}>{org.name}</Link>
                  </td>
                  <td>
                    <code>{org.slug}</code>
                  </td>
                  <td>{org.memberCount ?? '—'}</td>
                  <td>{formatTime(org.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.items.length === 0 && <p>{t('noResults')}</p>}
          <Pager page={page} pages={list.data.pages} total={list.data.total} go={(n) => go({ page: n })} />
        </>
      )}
      <CreateOrganization />
    </>
  );
}

function CreateOrganization() {
  const { run, error, busy } = useAction();
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body = { name: String(form.get('name') ?? '').trim(), slug: String(form.get('slug') ?? '').trim() };
    void run(async (client) => {
      const created = await call<Organization>(client, 'POST', '/organizations', { body });
      navigate(`/organizations/${encodeURIComponent(created.id)}`);
    });
  };
  return (
    <section aria-labelledby="create-organization">
      <h2 id="create-organization">{t('createOrganization')}</h2>
      <p className="muted">{t('organizationOwnerNote')}</p>
      <form className="inline" onSubmit={onSubmit}>
        <label>
          {t('name')}
          <input name="name" required maxLength={100} autoComplete="off" />
        </label>
        <label>
          {t('slug')}
          <input name="slug" required pattern="[a-z0-9\-]{3,50}" autoComplete="off" />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('create')}
        </button>
      </form>
      <ErrorMessage message={error} />
    </section>
  );
}

export function OrganizationPage({ id }: { id: string }) {
  const { query } = useLocation();
  const { page, pageSize } = pagingOf(query, PAGE_SIZES, 25);
  const search = query.get('search') ?? '';
  const base = `/organizations/${encodeURIComponent(id)}`;
  const [round, setRound] = useState(0);
  const reload = () => setRound((n) => n + 1);
  const org = useLoad(`org:${id}:${round}`, (client) => call<Organization>(client, 'GET', `/admin${base}`));
  const members = useLoad(JSON.stringify({ id, page, pageSize, search, round }), (client) =>
    call<Paged<Member>>(client, 'GET', `${base}/members`, { query: { page, pageSize, search } }),
  );
  const invitations = useLoad(`inv:${id}:${round}`, (client) =>
    call<Invitation[]>(client, 'GET', `${base}/invitations`),
  );
  const action = useAction();
  const confirm = useConfirm();
  const go = (change: { page?: number; search?: string }) => {
    const next = { page, search, ...change };
    navigate(
      withQuery(base, {
        search: next.search,
        ...pagingInUrl(next.page, pageSize, 25),
      }),
      true,
    );
  };
  const remove = () =>
    void action.run(async (client) => {
      await call(client, 'DELETE', `/admin${base}`);
      navigate('/organizations');
    });

  const o = org.data;
  return (
    <>
      <p>
        <Link to="/organizations">{t('back')}</Link>
      </p>
      <ErrorMessage message={org.error} />
      {o && (
        <>
          <h1>{o.name}</h1>
          <dl className="facts">
            <dt>{t('slug')}</dt>
            <dd>
              <code>{o.slug}</code>
            </dd>
            <dt>{t('memberCount')}</dt>
            <dd>{o.memberCount ?? '—'}</dd>
            <dt>{t('createdAt')}</dt>
            <dd>{formatTime(o.createdAt)}</dd>
            <dt>id</dt>
            <dd>
              <code>{o.id}</code>
            </dd>
          </dl>

          <h2 id="members">{t('members')}</h2>
          <SearchForm
            search={search}
            onSearch={(text) => go({ search: text, page: 1 })}
            labelledBy="members"
          />
          <ErrorMessage message={members.error} />
          {members.data && (
            <>
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t('username')}</th>
                    <th scope="col">{t('email')}</th>
                    <th scope="col">{t('role')}</th>
                    <th scope="col">{t('joinedAt')}</th>
                    <th scope="col">{t('remove')}</th>
                  </tr>
                </thead>
                <tbody>
                  {members.data.items.map((member) => (
                    <MemberRow key={member.userId} base={base} member={member} onDone={reload} />
                  ))}
                </tbody>
              </table>
              {members.data.items.length === 0 && <p>{t('noResults')}</p>}
              <Pager
                page={page}
                pages={members.data.pages}
                total={members.data.total}
                go={(n) => go({ page: n })}
              />
            </>
          )}

          <Invite base={base} onDone={reload} />
          <h2>{t('invitations')}</h2>
          <ErrorMessage message={invitations.error} />
          {invitations.data && <Invitations base={base} invitations={invitations.data} onDone={reload} />}

          <div className="toolbar">
            <button
              type="button"
              className="danger"
              onClick={() =>
                confirm.ask(
                  t('confirmDeleteOrganization', { name: o.name }),
                  t('confirmDeleteButton'),
                  remove,
                )
              }
            >
              {t('deleteOrganization')}
            </button>
          </div>
          {confirm.dialog}
          <ErrorMessage message={action.error} />
        </>
      )}
    </>
  );
}

function MemberRow({ base, member, onDone }: { base: string; member: Member; onDone(): void }) {
  const action = useAction();
  const path = `${base}/members/${encodeURIComponent(member.userId)}`;
  const roles = ROLES.includes(member.role) ? ROLES : [...ROLES, member.role];
  const onRole = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const role = String(new FormData(event.currentTarget).get('role') ?? '');
    void action.run(async (client) => {
      await call(client, 'PATCH', path, { body: { role } });
      onDone();
      return t('saved');
    });
  };
  const remove = () =>
    void action.run(async (client) => {
      await call(client, 'DELETE', path);
      onDone();
      return t('removed', { name: member.username });
    });
  return (
    <tr>
      <td>{member.username}</td>
      <td>{member.email ?? ''}</td>
      <td>
        <form className="inline" onSubmit={onRole} aria-label={t('changeRole', { name: member.username })}>
          <label>
            {t('role')}
            <select name="role" defaultValue={member.role} key={member.role}>
              {roles.map((role) => (
                <option key={role} value={role}>
                  {role}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={action.busy}>
            {t('save')}
          </button>
        </form>
        <ErrorMessage message={action.error} />
        {action.notice && <Notice message={action.notice} />}
      </td>
      <td>{formatTime(member.joinedAt)}</td>
      <td>
        <button type="button" className="danger" disabled={action.busy} onClick={remove}>
          {t('removeMember', { name: member.username })}
        </button>
      </td>
    </tr>
  );
}

function Invite({ base, onDone }: { base: string; onDone(): void }) {
  const { run, error, notice, busy } = useAction();
  const [round, setRound] = useState(0);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body = { email: String(form.get('email') ?? '').trim(), role: String(form.get('role') ?? '') };
    void run(async (client) => {
      await call(client, 'POST', `${base}/invitations`, { body });
      setRound((n) => n + 1);
      onDone();
      return t('invited', body);
    });
  };
  return (
    <section aria-labelledby="invite-member">
      <h2 id="invite-member">{t('inviteMember')}</h2>
      <form className="inline" onSubmit={onSubmit} key={round}>
        <label>
          {t('email')}
          <input name="email" type="email" required autoComplete="off" />
        </label>
        <label>
          {t('role')}
          <select name="role" defaultValue="member">
            {ROLES.map((role) => (
              <option key={role} value={role}>
                {role}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {t('invite')}
        </button>
      </form>
      <ErrorMessage message={error} />
      <Notice message={notice} />
    </section>
  );
}

function Invitations(props: { base: string; invitations: Invitation[]; onDone(): void }) {
  const { run, error } = useAction();
  const revoke = (invitation: Invitation) =>
    void run(async (client) => {
      await call(client, 'DELETE', `${props.base}/invitations/${encodeURIComponent(invitation.id)}`);
      props.onDone();
    });
  if (props.invitations.length === 0) return <p>{t('none')}</p>;
  return (
    <>
      <table>
        <thead>
          <tr>
            <th scope="col">{t('email')}</th>
            <th scope="col">{t('role')}</th>
            <th scope="col">{t('invitedBy')}</th>
            <th scope="col">{t('expiresAt')}</th>
            <th scope="col">{t('revoke')}</th>
          </tr>
        </thead>
        <tbody>
          {props.invitations.map((invitation) => (
            <tr key={invitation.id}>
              <td>{invitation.email}</td>
              <td>{invitation.role}</td>
              <td>{invitation.invitedBy?.username ?? '—'}</td>
              <td>{formatTime(invitation.expiresAt)}</td>
              <td>
                <button type="button" onClick={() => revoke(invitation)}>
                  {t('revoke')}
                  <span className="skip"> {invitation.email}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorMessage message={error} />
    </>
  );
}
