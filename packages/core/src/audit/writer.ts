import type { Logger } from '../kernel/log/logger.js';
import {
  FLUSH_BATCH_SIZE,
  FLUSH_INTERVAL_MS,
  MAX_QUEUED_ENTRIES,
  RETRY_BASE_MS,
  RETRY_MAX_MS,
  SHUTDOWN_FLUSH_ATTEMPTS,
} from './constants.js';
import type { NewActivity } from './tables.js';

/** What the writer needs (STYLE: dependencies as one object). */
export interface ActivityWriterDeps {
  insertMany(entries: NewActivity[]): Promise<void>;
  log: Logger;
  /** @default FLUSH_INTERVAL_MS */
  flushIntervalMs?: number;
  /** @default FLUSH_BATCH_SIZE */
  batchSize?: number;
  /** @default MAX_QUEUED_ENTRIES */
  maxQueued?: number;
}

/**
 * Write-behind of activity entries: requests only enqueue; batches are written off the response path every
 * {@link FLUSH_INTERVAL_MS} or once {@link FLUSH_BATCH_SIZE} wait, one multi-row INSERT each. A failing
 * database is retried with back-off while the queue is bounded ({@link MAX_QUEUED_ENTRIES}; the oldest
 * entries are dropped and the count logged). `close()` writes everything that is left.
 */
export function createActivityWriter(deps: ActivityWriterDeps) {
  const interval = deps.flushIntervalMs ?? FLUSH_INTERVAL_MS;
  const batchSize = deps.batchSize ?? FLUSH_BATCH_SIZE;
  // Above one batch, so a drop never touches the batch in flight (see enqueue).
  const maxQueued = Math.max(deps.maxQueued ?? MAX_QUEUED_ENTRIES, batchSize + 1);
  let queue: NewActivity[] = [];
  /** `write()` callers waiting for their entry's batch (activity_log_sync). */
  const waiting = new Map<NewActivity, () => void>();
  const release = (entries: NewActivity[]) => {
    if (waiting.size === 0) return;
    for (const entry of entries) {
      waiting.get(entry)?.();
      waiting.delete(entry);
    }
  };
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<boolean> | undefined;
  let failures = 0;
  let dropped = 0;
  let closed = false;

  function schedule(delay: number): void {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, delay);
    timer.unref();
  }

  function reportDropped(reason: string): void {
    if (dropped === 0) return;
    deps.log.error(`activity log: dropped ${dropped} entries (${reason})`, { dropped });
    dropped = 0;
  }

  /** Writes queued batches until the queue is empty; false when the database failed (entries kept). */
  function flush(): Promise<boolean> {
    // `.finally` runs asynchronously, so `flushing` is cleared only after it was assigned (an async IIFE with
    // an empty queue would finish synchronously and leave a settled promise behind).
    flushing ??= writeQueued().finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  async function writeQueued(): Promise<boolean> {
    while (queue.length > 0) {
      const batch = queue.slice(0, batchSize);
      try {
        await deps.insertMany(batch);
      } catch (error) {
        failures++;
        const delay = Math.min(RETRY_BASE_MS * 2 ** (failures - 1), RETRY_MAX_MS);
        deps.log.warn(`activity log: writing ${batch.length} entries failed, retrying in ${delay} ms`, {
          exc: error,
          queued: queue.length,
          attempt: failures,
        });
        reportDropped('queue full while the database failed');
        // Responses waiting for these entries go out: the entries stay queued, retried as without the setting.
        release(queue);
        timer ??= setTimeout(() => {
          timer = undefined;
          void flush();
        }, delay);
        timer.unref();
        return false;
      }
      // The batch is the head of the queue: entries enqueued meanwhile were appended, drops cut the head.
      queue = queue.slice(batch.length);
      release(batch);
      if (failures > 0) {
        deps.log.info('activity log: database writes recovered', { after: failures });
        reportDropped('queue full while the database failed');
      }
      failures = 0;
      // Other requests run between two batches (on the file database each batch holds the event loop).
      if (queue.length > 0) await new Promise((resolve) => setImmediate(resolve));
    }
    return true;
  }

  /** Queues one entry (never throws, never waits). */
  function enqueue(entry: NewActivity): void {
    if (queue.length >= maxQueued) {
      // Drop the oldest: the head may be the batch in flight, so its rows would be written twice; cut after it.
      release(queue.splice(flushing ? Math.min(batchSize, queue.length - 1) : 0, 1));
      dropped++;
    }
    queue.push(entry);
    if (failures > 0) return; // the back-off timer owns the next attempt
    if (queue.length >= batchSize && !flushing) {
      if (timer) clearTimeout(timer);
      timer = undefined;
      void flush();
    } else {
      schedule(interval);
    }
  }

  return {
    enqueue,

    /**
     * Queues one entry and resolves once it is written (activity_log_sync): written at once, or, while a batch
     * is in flight, with the next one (entries arriving together share one INSERT). Resolves as well when the
     * database fails (the entry stays queued and is retried as {@link enqueue}'s are). Never rejects.
     */
    write(entry: NewActivity): Promise<void> {
      const written = new Promise<void>((resolve) => waiting.set(entry, resolve));
      enqueue(entry);
      if (failures > 0) release([entry]);
      else {
        if (timer) clearTimeout(timer);
        timer = undefined;
        // A batch in flight takes entries queued meanwhile in its loop; one that is finishing may not: go again.
        void (flushing ? flushing.then(() => flush()) : flush());
      }
      return written;
    },

    /** Writes what is queued now (one attempt per batch); false when the database failed. */
    async drain(): Promise<boolean> {
      while (flushing) await flushing;
      if (failures > 0) return false;
      return flush();
    },

    /** Entries waiting to be written. */
    get pending(): number {
      return queue.length;
    },

    /** Graceful shutdown: writes everything, retrying a failing database a few times before giving up. */
    async close(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (let attempt = 0; attempt <= SHUTDOWN_FLUSH_ATTEMPTS; attempt++) {
        while (flushing) await flushing;
        if (timer) clearTimeout(timer);
        timer = undefined;
        if (await flush()) break;
        if (attempt < SHUTDOWN_FLUSH_ATTEMPTS) {
          await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_BASE_MS * 2 ** attempt, 4_000)));
        }
      }
      if (timer) clearTimeout(timer);
      timer = undefined;
      dropped += queue.length;
      release(queue);
      queue = [];
      reportDropped('the database failed at shutdown');
    },
  };
}

export type ActivityWriter = ReturnType<typeof createActivityWriter>;
