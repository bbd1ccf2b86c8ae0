// Webhooks (SPEC-3 §6 "webhooks with their deliveries (redeliver, test)", SPEC-3 §3): every endpoint
// (`GET /admin/webhooks`, a list, not paginated), create one (its secret shown this once), and an endpoint's
// page: its URL, events, description and enabled flag changed (`PATCH`), the secret rotated (the new one shown
// once), a test event sent, the deliveries with a status filter and paging in the URL, a delivery redelivered,
// and the deletion after a confirmation.
import { useState, type FormEvent } from 'react';
import { call, type Paged } from './api.js';
import { t, type TextKey } from './i18n.js';
import { Link, navigate, useLocation, withQuery } from './router.js';
import { useConfirm } from './confirm.js';
import { PageSize, Pager, SearchForm, pagingOf, pagingInUrl } from './list.js';
import { ErrorMessage, Notice, formatTime, useAction, useLoad, yesNo } from './ui.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/event-types.js';

interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  createdAt: string;
}

interface Delivery {
  id: string;
  eventId: string;
  type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

/** SPEC-3 §3 "Event types" (`webhook.test` is sent by "Send test event" whatever these). */
const EVENT_TYPES: readonly string[] = WEBHOOK_EVENT_TYPES;
const STATUSES: { value: Delivery['status']; label: TextKey }[] = [
  { value: 'pending', label: 'statusPending' },
  { value: 'succeeded', label: 'statusSucceeded' },
  { value: 'failed', label: 'statusFailed' },
];
const PAGE_SIZES = [10, 25, 50, 100];

/** The events chosen in a form: `["*"]` when "All events" is ticked, else the ticked types. */
function eventsOf(form: FormData): string[] {
  return form.get('all') === 'on' ? ['*'] : form.getAll('events').map(String);
}

/** The events fieldset: "All events" or a box per type. */
function EventsField({ chosen }: { chosen: string[] }) {
  const all = chosen.includes('*');
  return (
    <fieldset className="events">
      <legend>{t('events')}</legend>
      <label className="check">
        <input name="all" type="checkbox" defaultChecked={all} />
        {t('allEvents')}
      </label>
      {EVENT_TYPES.map((type) => (
        <label className="check" key={type}>
          <input name="events" type="checkbox" value={type} defaultChecked={!all && chosen.includes(type)} />
          <code>{type}</code>
        </label>
      ))}
    </fieldset>
  );
}

/** A secret the API shows this once. */
function Secret({ secret }: { secret: string | null }) {
  if (!secret) return null;
  return (
    <div className="secret" role="status">
      <p>{t('secretOnce')}</p>
      <label>
        {t('secret')}
        <input readOnly value={secret} onFocus={(event) => event.currentTarget.select()} />
      </label>
    </div>
  );
}

export function WebhooksPage() {
  const [round, setRound] = useState(0);
  const list = useLoad(`webhooks:${round}`, (client) => call<Webhook[]>(client, 'GET', '/admin/webhooks'));
  const { query } = useLocation();
  const search = query.get('search') ?? '';
  const needle = search.toLowerCase();
  const shown = (list.data ?? []).filter(
    (hook) => hook.url.toLowerCase().includes(needle) || hook.description.toLowerCase().includes(needle),
  );

  return (
    <>
      <h1>{t('webhooks')}</h1>
      <SearchForm
        search={search}
        onSearch={(text) => navigate(withQuery('/webhooks', { search: text }), true)}
      />
      <ErrorMessage message={list.error} />
      {list.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('url')}</th>
                <th scope="col">{t('description')}</th>
                <th scope="col">{t('events')}</th>
                <th scope="col">{t('enabled')}</th>
                <th scope="col">{t('createdAt')}</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((hook) => (
                <tr key={hook.id}>
                  <td>
                    <Link to={`/webhooks/${encodeURIComponent(hook.id)}`}>{hook.url}</Link>
                  </td>
                  <td>{hook.description}</td>
                  <td>{hook.events.join(', ')}</td>
                  <td>{yesNo(hook.enabled)}</td>
                  <td>{formatTime(hook.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {shown.length === 0 && <p>{t('noResults')}</p>}
        </>
      )}
      <CreateWebhook onDone={() => setRound((n) => n + 1)} />
    </>
  );
}

function CreateWebhook({ onDone }: { onDone(): void }) {
  const { run, error, busy } = useAction();
  const [created, setCreated] = useState<(Webhook & { secret: string }) | null>(null);
  const [round, setRound] = useState(0);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body = {
      url: String(form.get('url') ?? '').trim(),
      description: String(form.get('description') ?? ''),
      events: eventsOf(form),
      enabled: form.get('enabled') === 'on',
    };
    void run(async (client) => {
      setCreated(await call<Webhook & { secret: string }>(client, 'POST', '/admin/webhooks', { body }));
      setRound((n) => n + 1);
      onDone();
    });
  };
  return (
    <section aria-labelledby="create-webhook">
      <h2 id="create-webhook">{t('createWebhook')}</h2>
      <form className="inline" onSubmit={onSubmit} key={round}>
        <label>
          {t('url')}
          <input name="url" type="url" required autoComplete="off" size={40} />
        </label>
        <label>
          {t('description')}
          <input name="description" autoComplete="off" />
        </label>
        <label className="check">
          <input name="enabled" type="checkbox" defaultChecked />
          {t('enabled')}
        </label>
        <EventsField chosen={['*']} />
        <button type="submit" className="primary" disabled={busy}>
          {t('createWebhook')}
        </button>
      </form>
      <ErrorMessage message={error} />
      {created && (
        <>
          <p>
            <Link to={`/webhooks/${encodeURIComponent(created.id)}`}>{created.url}</Link>
          </p>
          <Secret secret={created.secret} />
        </>
      )}
    </section>
  );
}

export function WebhookPage({ id }: { id: string }) {
  const path = `/admin/webhooks/${encodeURIComponent(id)}`;
  const [round, setRound] = useState(0);
  const hook = useLoad(`webhook:${id}:${round}`, (client) => call<Webhook>(client, 'GET', path));
  const action = useAction();
  const [secret, setSecret] = useState<string | null>(null);
  const confirm = useConfirm();

  const onSave = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body = {
      url: String(form.get('url') ?? '').trim(),
      description: String(form.get('description') ?? ''),
      events: eventsOf(form),
      enabled: form.get('enabled') === 'on',
    };
    void action.run(async (client) => {
      await call(client, 'PATCH', path, { body });
      setRound((n) => n + 1);
      return t('saved');
    });
  };
  const rotate = () =>
    void action.run(async (client) => {
      setSecret((await call<{ secret: string }>(client, 'POST', `${path}/rotate-secret`)).secret);
    });
  const test = () =>
    void action.run(async (client) => {
      await call(client, 'POST', `${path}/test`);
      setRound((n) => n + 1);
      return t('testQueued');
    });
  const remove = () =>
    void action.run(async (client) => {
      await call(client, 'DELETE', path);
      navigate('/webhooks');
    });

  const h = hook.data;
  return (
    <>
      <p>
        <Link to="/webhooks">{t('back')}</Link>
      </p>
      <ErrorMessage message={hook.error} />
      {h && (
        <>
          <h1>{h.url}</h1>
          <form className="inline" onSubmit={onSave} key={JSON.stringify(h)}>
            <label>
              {t('url')}
              <input name="url" type="url" required defaultValue={h.url} size={40} autoComplete="off" />
            </label>
            <label>
              {t('description')}
              <input name="description" defaultValue={h.description} autoComplete="off" />
            </label>
            <label className="check">
              <input name="enabled" type="checkbox" defaultChecked={h.enabled} />
              {t('enabled')}
            </label>
            <EventsField chosen={h.events} />
            <button type="submit" className="primary" disabled={action.busy}>
              {t('save')}
            </button>
          </form>
          <div className="toolbar">
            <button type="button" disabled={action.busy} onClick={test}>
              {t('sendTest')}
            </button>
            <button type="button" disabled={action.busy} onClick={rotate}>
              {t('rotateSecret')}
            </button>
            <button
              type="button"
              className="danger"
              onClick={() =>
                confirm.ask(t('confirmDeleteWebhook', { name: h.url }), t('confirmDeleteButton'), remove)
              }
            >
              {t('deleteWebhook')}
            </button>
          </div>
          {confirm.dialog}
          <ErrorMessage message={action.error} />
          <Notice message={action.notice} />
          <Secret secret={secret} />
          <Deliveries id={id} path={path} round={round} />
        </>
      )}
    </>
  );
}

function Deliveries({ id, path, round }: { id: string; path: string; round: number }) {
  const { query } = useLocation();
  const status = STATUSES.some((s) => s.value === query.get('status')) ? query.get('status')! : '';
  const { page, pageSize } = pagingOf(query, PAGE_SIZES, 25);
  const [again, setAgain] = useState(0);
  const state = { status, page, pageSize };
  const list = useLoad(JSON.stringify({ ...state, round, again }), (client) =>
    call<Paged<Delivery>>(client, 'GET', `${path}/deliveries`, { query: state }),
  );
  const action = useAction();
  const go = (change: Partial<typeof state>) => {
    const next = { ...state, ...change };
    navigate(
      withQuery(`/webhooks/${encodeURIComponent(id)}`, {
        status: next.status,
        ...pagingInUrl(next.page, next.pageSize, 25),
      }),
      true,
    );
  };
  const redeliver = (delivery: Delivery) =>
    void action.run(async (client) => {
      await call(client, 'POST', `${path}/deliveries/${encodeURIComponent(delivery.id)}/redeliver`);
      setAgain((n) => n + 1);
      return t('redelivered');
    });
  const label = (value: string) => t(STATUSES.find((s) => s.value === value)?.label ?? 'statusPending');

  return (
    <section aria-labelledby="deliveries">
      <h2 id="deliveries">{t('deliveries')}</h2>
      <div className="toolbar">
        <label>
          {t('status')}
          <select value={status} onChange={(event) => go({ status: event.target.value, page: 1 })}>
            <option value="">{t('any')}</option>
            {STATUSES.map((s) => (
              <option key={s.value} value={s.value}>
                {t(s.label)}
              </option>
            ))}
          </select>
        </label>
        <PageSize sizes={PAGE_SIZES} value={pageSize} onChange={(size) => go({ pageSize: size, page: 1 })} />
        <button type="button" onClick={() => setAgain((n) => n + 1)}>
          {t('refresh')}
        </button>
      </div>
      <ErrorMessage message={list.error ?? action.error} />
      <Notice message={action.notice} />
      {list.data && (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('createdAt')}</th>
                <th scope="col">{t('type')}</th>
                <th scope="col">{t('status')}</th>
                <th scope="col">{t('attempts')}</th>
                <th scope="col">{t('lastStatusCode')}</th>
                <th scope="col">{t('lastError')}</th>
                <th scope="col">{t('nextAttemptAt')}</th>
                <th scope="col">{t('deliveredAt')}</th>
                <th scope="col">{t('redeliver')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((delivery) => (
                <tr key={delivery.id}>
                  <td>{formatTime(delivery.createdAt)}</td>
                  <td>
                    <code>{delivery.type}</code>
                  </td>
                  <td>{label(delivery.status)}</td>
                  <td>{delivery.attempts}</td>
                  <td>{delivery.lastStatusCode ?? '—'}</td>
                  <td>{delivery.lastError ?? '—'}</td>
                  <td>{formatTime(delivery.nextAttemptAt)}</td>
                  <td>{formatTime(delivery.deliveredAt)}</td>
                  <td>
                    <button type="button" disabled={action.busy} onClick={() => redeliver(delivery)}>
                      {t('redeliver')}
                      <span className="skip">
                        {' '}
                        {delivery.type} {delivery.id}
                      </span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.items.length === 0 && <p>{t('noResults')}</p>}
          <Pager page={page} pages={list.data.pages} total={list.data.total} go={(to) => go({ page: to })} />
        </>
      )}
    </section>
  );
}
