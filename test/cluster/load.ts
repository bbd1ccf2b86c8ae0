// The load generator of the fault tests: keep-alive clients through nginx, each repeating a logged write that
// creates a note, a logged write that archives it (its entry names the note: `archived <id> by <username>`)
// and a read, paced to a total rate.
import { setTimeout as sleep } from 'node:timers/promises';
import { upstreamOf, type Cluster } from './cluster.js';
import { dataOf, freshAddress } from './helpers.js';

export interface Outcome {
  kind: 'create' | 'archive' | 'read';
  /** HTTP status; 0 when the request got no answer at all. */
  status: number;
  /** The host(s) nginx tried, as `$upstream_addr` names them (`a, b` when it went on to the second). */
  upstream: string;
  noteId?: number;
  detail?: string;
}

export interface Load {
  outcomes: Outcome[];
  /** Stops sending, waits for the requests in flight; returns every outcome and the achieved rate. */
  stop(): Promise<{ outcomes: Outcome[]; seconds: number; perSecond: number }>;
}

/** Starts `connections` clients sending `rate` requests a second in all (a few hundred at most). */
export function startLoad(
  cluster: Cluster,
  token: string,
  options: { rate: number; connections: number },
): Load {
  const outcomes: Outcome[] = [];
  const started = performance.now();
  const interval = (1000 * options.connections) / options.rate;
  let stopping = false;
  let counter = 0;
  const clients = Array.from({ length: options.connections }, () => cluster.client(freshAddress()));
  const send = async (kind: Outcome['kind'], run: () => ReturnType<(typeof clients)[0]['get']>) => {
    try {
      const res = await run();
      const outcome: Outcome = { kind, status: res.status, upstream: upstreamOf(res) };
      if (res.status >= 300) outcome.detail = res.text.slice(0, 200);
      outcomes.push(outcome);
      return { outcome, res };
    } catch (error) {
      const outcome: Outcome = { kind, status: 0, upstream: '', detail: (error as Error).message };
      outcomes.push(outcome);
      return { outcome, res: undefined };
    }
  };
  const loops = clients.map(async (client) => {
    let next = performance.now();
    const paced = async () => {
      next += interval;
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      else next = performance.now();
    };
    while (!stopping) {
      const created = await send('create', () =>
        client.post('/api/notes/', { text: `load note ${++counter}` }, { token }),
      );
      await paced();
      if (created.res?.status === 201) {
        const noteId = dataOf<{ id: number }>(created.res).id;
        created.outcome.noteId = noteId;
        if (stopping) break;
        const archived = await send('archive', () =>
          client.post(`/api/notes/${noteId}/archive`, undefined, { token }),
        );
        archived.outcome.noteId = noteId;
        await paced();
      }
      if (stopping) break;
      await send('read', () => client.get('/api/notes/', { token }));
      await paced();
    }
  });
  return {
    outcomes,
    async stop() {
      stopping = true;
      await Promise.all(loops);
      for (const client of clients) client.close();
      // Idempotent: a test's afterAll stops what a failed test left running.
      const seconds = (performance.now() - started) / 1000;
      return { outcomes, seconds, perSecond: outcomes.length / seconds };
    },
  };
}

/** The host that answered: the last one nginx tried (`$upstream_addr` lists each it tried). */
export function answeredBy(outcome: Outcome): string {
  return outcome.upstream.split(', ').pop() ?? '';
}

/** Requests that got no answer or a 5xx. */
export function failuresOf(outcomes: Outcome[]): Outcome[] {
  return outcomes.filter((o) => o.status === 0 || o.status >= 500);
}

/** What the client saw acknowledged: notes created (201) and archived (200). */
function acknowledged(outcomes: Outcome[]) {
  return {
    created: outcomes.filter((o) => o.kind === 'create' && o.status === 201).map((o) => o.noteId!),
    archived: outcomes.filter((o) => o.kind === 'archive' && o.status === 200),
  };
}

/**
 * Acknowledged writes missing from the database (must be none), and acknowledged archives whose activity
 * entry is missing (what the activity log lost), split by the host that answered.
 */
export async function checkStored(cluster: Cluster, outcomes: Outcome[]) {
  const { created, archived } = acknowledged(outcomes);
  const ids = [...new Set([...created, ...archived.map((o) => o.noteId!)])];
  const stored = ids.length
    ? await cluster.rows<{ id: number; archived: boolean }>(
        `select id, archived from demo_note where id in (${ids.join(',')})`,
      )
    : [];
  const byId = new Map(stored.map((row) => [Number(row.id), row.archived]));
  const missingNotes = created.filter((id) => !byId.has(id));
  const notArchived = archived.filter((o) => byId.get(o.noteId!) !== true).map((o) => o.noteId!);
  const entries = await cluster.rows<{ description: string }>(
    `select description from svc_activity_log where description like 'archived %'`,
  );
  const logged = new Set(entries.map((e) => Number(/^archived (\d+) /.exec(e.description)?.[1])));
  const entriesLost = (upstream: string) =>
    archived.filter((o) => answeredBy(o) === upstream && !logged.has(o.noteId!)).length;
  return { missingNotes, notArchived, entriesLost, acknowledgedArchives: archived };
}
