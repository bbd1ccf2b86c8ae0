// Small shared pieces of the console's pages.
import { useCallback, useEffect, useState } from 'react';
import { useSession } from '@svc/react';
import type { SvcClient } from '@svc/client';
import { messageOf } from './api.js';
import { t } from './i18n.js';

/** The API's refusal, announced to screen readers. */
export function ErrorMessage({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p className="error" role="alert">
      {message}
    </p>
  );
}

/** A success note, announced politely. */
export function Notice({ message }: { message: string | null | undefined }) {
  return (
    <p className="notice" role="status">
      {message ?? ''}
    </p>
  );
}

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/** Runs `load` with the session's client whenever `key` changes (and on `reload`). */
export function useLoad<T>(key: string, load: (client: SvcClient) => Promise<T>): Loaded<T> {
  const { client } = useSession();
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    load(client).then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState({ data: null, error: messageOf(error), loading: false }),
    );
    return () => {
      live = false;
    };
    // `load` is a new function each render; `key` says when what it loads changes.
  }, [client, key, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { ...state, reload };
}

/** Runs an action, keeping its refusal (the API's message) and a success note for the page to show. */
export function useAction() {
  const { client } = useSession();
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = useCallback(
    async (action: (client: SvcClient) => Promise<string | null | void>): Promise<boolean> => {
      setBusy(true);
      setError(null);
      setNotice(null);
      try {
        const done = await action(client);
        if (done) setNotice(done);
        return true;
      } catch (caught) {
        setError(messageOf(caught));
        return false;
      } finally {
        setBusy(false);
      }
    },
    [client],
  );
  return { run, error, notice, busy };
}

export function formatTime(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}

export function yesNo(value: boolean): string {
  return value ? t('yes') : t('no');
}

/** The performance mark of the first users list shown (docs/performance.md "The admin console's first page"). */
export const FIRST_PAGE_MARK = 'svc-console:first-page';

let firstPageDone: () => void = () => undefined;
/** Settles when the first users list is on screen (see {@link markFirstPage}). */
export const firstPageShown = new Promise<void>((resolve) => (firstPageDone = resolve));

/** Marks the moment the first list is on screen, once per page load (read by bench/console-size.mjs). */
export function markFirstPage(): void {
  if (performance.getEntriesByName(FIRST_PAGE_MARK).length === 0) performance.mark(FIRST_PAGE_MARK);
  firstPageDone();
}
