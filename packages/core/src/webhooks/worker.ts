import { randomUUID } from 'node:crypto';
import type { Settings } from '../kernel/config/schema.js';
import type { Logger } from '../kernel/log/logger.js';
import { attemptDelivery, type AttemptOutcome } from './attempt.js';
import { createConnectionPool } from './connections.js';
import {
  CLAIM_BATCH,
  CLAIM_GATHER_MS,
  LEASE_MARGIN_MS,
  MAX_IN_FLIGHT,
  POLL_INTERVAL_MS,
  PURGE_AFTER_MS,
  PURGE_EVERY_MS,
  SETTLE_BATCH,
  SETTLE_DELAY_MS,
} from './constants.js';
import { signatureHeader } from './signing.js';
import type { ClaimedDelivery, SettleItem, Settlement, WebhookStore } from './store.js';

export interface WebhookWorkerDeps {
  settings: Settings;
  store: WebhookStore;
  log: Logger;
  now: () => Date;
  /** Extra TLS options of every attempt (a test's own certificate authority). */
  tls?: { ca?: string | Buffer };
}

/** SPEC-3 §3: `webhook_retry_schedule` as waits in milliseconds. */
export function retryWaits(schedule: string): number[] {
  return schedule
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => Number(s) * 1000);
}

/**
 * The body of an event (SPEC-3 §3): `{id, type, timestamp, data}`, built from the stored text of `data`, so
 * every attempt sends the same bytes.
 */
export function eventBody(event: { id: string; type: string; createdAt: Date; data: string }): string {
  return `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},"timestamp":${JSON.stringify(
    event.createdAt.toISOString(),
  )},"data":${event.data}}`;
}

/**
 * The delivery worker of one process (SPEC-3 §3 "Delivery"; docs/webhooks.md): every half second, at once
 * after a full batch, and soon after slots free under a backlog, it claims due deliveries with a lease and
 * attempts them in the background, at most {@link MAX_IN_FLIGHT} at a time, on kept-alive connections per
 * receiver (connections.ts). Finished attempts
 * are settled together: within {@link SETTLE_DELAY_MS} or once {@link SETTLE_BATCH} are waiting, one statement
 * writes them all, each still only while its claim holds. Requests never wait for it: they only write the
 * outbox. Once an hour it purges finished records older than 30 days.
 */
export function createWebhookWorker(deps: WebhookWorkerDeps) {
  const { store, settings, log } = deps;
  const waits = retryWaits(settings.webhook_retry_schedule);
  const timeoutMs = settings.webhook_timeout_seconds * 1000;
  const inFlight = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  /** When the scheduled poll runs (Infinity while none is scheduled or one is running). */
  let timerDue = Infinity;
  let stopped = true;
  let lastPurge = 0;
  let polling: Promise<void> | undefined;
  /** A poll is running or scheduled at once. */
  let pollingNow = false;
  /** The last poll left due deliveries behind (a full batch, or no free slot): a freed slot polls at once. */
  let backlog = false;
  const connections = createConnectionPool({
    allowPrivate: settings.webhooks_allow_private_targets,
    ...(deps.tls ? { tls: deps.tls } : {}),
  });

  /**
   * Finished attempts waiting to be settled. A settlement that is lost (the process dies first, or the
   * statement fails) leaves the delivery leased until its lease ends; it is then attempted again (SPEC-3 §3: at
   * least once), as when a host dies mid-attempt.
   */
  let toSettle: SettleItem[] = [];
  let settleTimer: NodeJS.Timeout | undefined;
  /** The settling statements, one after another (a batch never races the one before it). */
  let settling: Promise<void> = Promise.resolve();

  function settleLater(item: SettleItem): void {
    toSettle.push(item);
    if (toSettle.length >= SETTLE_BATCH) flushSettlements();
    else settleTimer ??= setTimeout(flushSettlements, SETTLE_DELAY_MS);
  }

  function flushSettlements(): Promise<void> {
    clearTimeout(settleTimer);
    settleTimer = undefined;
    if (toSettle.length === 0) return settling;
    const batch = toSettle;
    toSettle = [];
    settling = settling.then(() =>
      store.settleMany(batch).catch((error: unknown) => {
        // The database refused the settlements: the leases end and the attempts are made again (at least once).
        log.warn('webhook deliveries could not be settled', {
          deliveries: batch.length,
          error: String(error),
        });
      }),
    );
    return settling;
  }

  function settlementOf(job: ClaimedDelivery, outcome: AttemptOutcome, now: Date): Settlement {
    const attempts = job.attempts + 1;
    const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const base = { attempts, lastStatusCode: outcome.statusCode, lastError: outcome.error };
    if (ok) return { ...base, status: 'succeeded', nextAttemptAt: null, deliveredAt: now };
    // SPEC-3 §3: each wait counted from the end of the failed attempt; 1 + N attempts for N waits.
    const wait = outcome.statusCode === 410 ? undefined : waits[attempts - 1];
    if (wait === undefined) return { ...base, status: 'failed', nextAttemptAt: null, deliveredAt: null };
    return { ...base, status: 'pending', nextAttemptAt: new Date(now.getTime() + wait), deliveredAt: null };
  }

  async function deliver(job: ClaimedDelivery, claim: string): Promise<void> {
    try {
      if (!job.enabled) {
        // Disabled between the claim and now: ended like the disabling ends pending deliveries.
        settleLater({
          id: job.id,
          claim,
          settlement: {
            status: 'failed',
            attempts: job.attempts,
            lastStatusCode: null,
            lastError: 'endpoint disabled',
            nextAttemptAt: null,
            deliveredAt: null,
          },
        });
        return;
      }
      const body = eventBody({
        id: job.eventId,
        type: job.type,
        createdAt: job.eventCreatedAt,
        data: job.data,
      });
      const timestamp = Math.floor(deps.now().getTime() / 1000);
      const secrets = [job.secret];
      if (job.previousSecret && job.previousSecretExpiresAt && job.previousSecretExpiresAt > deps.now()) {
        secrets.push(job.previousSecret);
      }
      let agent;
      try {
        agent = connections.agentFor(new URL(job.url));
      } catch {
        agent = undefined; // not a URL: attemptDelivery says so (`webhook.url_invalid`)
      }
      const outcome = await attemptDelivery({
        url: job.url,
        ...(agent ? { agent } : {}),
        body,
        timeoutMs,
        allowPrivate: settings.webhooks_allow_private_targets,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'svc-webhooks',
          'webhook-id': job.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(secrets, job.eventId, timestamp, body),
        },
        ...(deps.tls ? { tls: deps.tls } : {}),
      });
      const settlement = settlementOf(job, outcome, deps.now());
      if (outcome.statusCode === 410) await store.gone(job.id, claim, job.endpointId, settlement);
      else settleLater({ id: job.id, claim, settlement });
    } catch (error) {
      // The database refused the settlement: the lease ends and the attempt is made again (at least once).
      log.warn('webhook delivery could not be settled', { deliveryId: job.id, error: String(error) });
    }
  }

  async function poll(): Promise<boolean> {
    const free = MAX_IN_FLIGHT - inFlight.size;
    let full = free <= 0;
    if (free > 0) {
      const limit = Math.min(free, CLAIM_BATCH);
      const now = deps.now();
      const claim = randomUUID();
      const jobs = await store.claim(
        now,
        new Date(now.getTime() + timeoutMs + LEASE_MARGIN_MS),
        claim,
        limit,
      );
      full = jobs.length === limit;
      for (const job of jobs) {
        const running = deliver(job, claim);
        inFlight.add(running);
        void running.finally(() => {
          inFlight.delete(running);
          // Under a backlog the worker claims again soon after slots free, not at the next interval: at once
          // when half a batch is free, else after the others freeing meanwhile (CLAIM_GATHER_MS).
          if (backlog && !pollingNow)
            scheduleWithin(MAX_IN_FLIGHT - inFlight.size >= CLAIM_BATCH / 2 ? 0 : CLAIM_GATHER_MS);
        });
      }
    }
    connections.sweep();
    if (Date.now() - lastPurge >= PURGE_EVERY_MS) {
      lastPurge = Date.now();
      await store.purge(new Date(deps.now().getTime() - PURGE_AFTER_MS));
    }
    return full;
  }

  /** Polls within `ms`: keeps a poll already due sooner. */
  function scheduleWithin(ms: number): void {
    if (Date.now() + ms < timerDue) schedule(ms);
  }

  function schedule(ms: number): void {
    if (stopped) return;
    clearTimeout(timer);
    pollingNow = ms === 0;
    timerDue = Date.now() + ms;
    timer = setTimeout(() => {
      timerDue = Infinity;
      pollingNow = true;
      polling = poll().then(
        (full) => {
          backlog = full;
          // A full batch with slots left: claim again at once; no slot left: a finishing attempt polls.
          schedule(full && inFlight.size < MAX_IN_FLIGHT ? 0 : POLL_INTERVAL_MS);
        },
        (error: unknown) => {
          log.warn('webhook delivery worker: claiming failed', { error: String(error) });
          schedule(POLL_INTERVAL_MS);
        },
      );
    }, ms);
    timer.unref();
  }

  return {
    start(): void {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    /**
     * Stops claiming, waits for the attempts in flight (each ends by `webhook_timeout_seconds`), writes their
     * settlements and closes the kept-alive connections.
     */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await polling;
      await Promise.allSettled([...inFlight]);
      await flushSettlements();
      connections.close();
    },
  };
}

export type WebhookWorker = ReturnType<typeof createWebhookWorker>;
