import { SvcApiError } from './errors.js';
import { openChannel, webLocks, type ChannelLike, type LockManagerLike } from './platform.js';
import type { TokenPair, TokenStorage } from './storage.js';

/** Why the client is signed out (docs/client.md "Signed out"). */
export type SignedOutReason =
  | 'logout' // logout() here or in another tab
  | 'refresh_failed' // the refresh token was refused (expired, revoked, user gone or inactive)
  | 'revoked'; // a request answered that the login is over (password change, session revoked, user deleted)

/** Messages between tabs of one origin on the BroadcastChannel. */
type TabMessage =
  { type: 'tokens'; pair: TokenPair; login?: boolean } | { type: 'signed-out'; reason: SignedOutReason };

export interface RefresherOptions {
  storage: TokenStorage;
  /** `POST /auth/refresh-token` with this refresh token: the new pair, or the refusal. */
  requestRefresh(refreshToken: string): Promise<TokenPair>;
  /** Coordinate with other tabs (Web Locks, BroadcastChannel) under this name; undefined: this client only. */
  crossTabName: string | undefined;
  /** How long a refused reuse waits for another tab's pair (SPEC `refresh_reuse_grace_seconds`). */
  graceMs: number;
  onSignedOut(reason: SignedOutReason): void;
  /** A login stored here or in another tab (not a refresh). */
  onSignedIn?(): void;
}

export interface Refresher {
  /**
   * A new pair for the one whose access token was `stale`: one refresh at a time per client, and with
   * cross-tab coordination one per origin (the pair another tab got meanwhile is taken as is). Resolves with
   * null when signed out; rejects (keeping the pair) when the server could not be asked (network, 5xx, 429).
   */
  refresh(stale: string): Promise<TokenPair | null>;
  /** Stores a pair (a login when `login`, else a refresh) and hands it to the other tabs. */
  store(pair: TokenPair, login?: boolean): Promise<void>;
  /** Forgets the pair here and in the other tabs. */
  signOut(reason: SignedOutReason): Promise<void>;
  close(): void;
}

const POLL_MS = 50;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A short fingerprint of a token for a lock name (FNV-1a): names are visible to the origin's scripts. */
function fingerprint(token: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < token.length; i++) hash = Math.imul(hash ^ token.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(36);
}

/**
 * Refresh rotation without logging anybody out (SPEC "Refresh token and login"): a refresh token works once,
 * and a second use more than `refresh_reuse_grace_seconds` later revokes the whole login. So two refreshes of
 * one pair must never race: in a page, concurrent callers share one promise; across tabs, a Web Lock lets one
 * tab refresh while the others wait and then find the new pair in the shared storage (or on the channel).
 * Where Web Locks are missing, tabs may race: the loser gets 401 `auth.refresh_token_revoked` inside the grace
 * window (the login survives) and takes the winner's pair when it arrives instead of signing out.
 */
export function createRefresher(options: RefresherOptions): Refresher {
  const { storage, graceMs } = options;
  const lockName = options.crossTabName && `${options.crossTabName}:refresh`;
  const channel: ChannelLike | undefined = options.crossTabName
    ? openChannel(options.crossTabName)
    : undefined;
  /** A pair another tab posted, for a storage that tabs do not share. */
  const arrivals = new Set<(pair: TokenPair | null) => void>();
  let inFlight: Promise<TokenPair | null> | undefined;

  if (channel) {
    channel.onmessage = (event) => {
      const message = event.data as TabMessage;
      if (message?.type === 'tokens') {
        void Promise.resolve(storage.shared ? undefined : storage.set(message.pair)).then(() => {
          for (const arrived of arrivals) arrived(message.pair);
          if (message.login) options.onSignedIn?.();
        });
      } else if (message?.type === 'signed-out') {
        void Promise.resolve(storage.shared ? undefined : storage.set(null)).then(() => {
          for (const arrived of arrivals) arrived(null);
          options.onSignedOut(message.reason);
        });
      }
    };
  }

  async function store(pair: TokenPair, login = false): Promise<void> {
    await storage.set(pair);
    channel?.postMessage({ type: 'tokens', pair, ...(login ? { login } : {}) } satisfies TabMessage);
    if (login) options.onSignedIn?.();
  }

  async function signOut(reason: SignedOutReason): Promise<void> {
    await storage.set(null);
    channel?.postMessage({ type: 'signed-out', reason } satisfies TabMessage);
    options.onSignedOut(reason);
  }

  /**
   * After a refused reuse: the pair another tab or client stored or posted within `ms`, or null. Only where
   * someone else can refresh the same pair (shared storage or other tabs); otherwise nobody will.
   */
  async function pairFromElsewhere(spent: TokenPair, ms: number): Promise<TokenPair | null> {
    if (!storage.shared && !channel) return null;
    let posted: TokenPair | null | undefined;
    const arrived = (pair: TokenPair | null) => (posted = pair);
    arrivals.add(arrived);
    try {
      const deadline = Date.now() + ms;
      for (;;) {
        if (posted !== undefined) return posted;
        const now = await storage.get();
        if (!now) return null; // another tab signed out
        if (now.refreshToken !== spent.refreshToken) return now;
        if (Date.now() >= deadline) return null;
        await sleep(POLL_MS);
      }
    } finally {
      arrivals.delete(arrived);
    }
  }

  /**
   * Under the Web Lock, a tab that refreshed marks it with a second lock named after the pair it replaced,
   * held for the grace window. The browser grants locks in order, so the next tab to get the refresh lock sees
   * the mark even while the new pair is still on its way to its copy of localStorage (tabs' storage and
   * channel messages arrive in their own time), and waits for the pair instead of spending the token again.
   */
  const markName = (stale: string) => `${lockName}:refreshed:${fingerprint(stale)}`;

  async function markRefreshed(locks: LockManagerLike, stale: string): Promise<void> {
    await new Promise<void>((granted) => {
      void locks.request(markName(stale), () => {
        granted();
        return sleep(graceMs);
      });
    });
  }

  async function refreshedElsewhere(locks: LockManagerLike, stale: string): Promise<boolean> {
    const state = await locks.query();
    return (state.held ?? []).some((lock) => lock.name === markName(stale));
  }

  async function attempt(stale: string, locks: LockManagerLike | undefined): Promise<TokenPair | null> {
    const current = await storage.get();
    if (!current) return null;
    // Someone (this page before the lock, another tab) refreshed since the caller read its pair: use theirs.
    if (current.accessToken !== stale) return current;
    if (locks && (await refreshedElsewhere(locks, stale))) {
      const theirs = await pairFromElsewhere(current, graceMs);
      if (theirs) return theirs;
    }
    if (!current.refreshToken) {
      await signOut('refresh_failed');
      return null;
    }
    const startedAt = Date.now();
    try {
      const pair = await options.requestRefresh(current.refreshToken);
      await store(pair);
      if (locks) await markRefreshed(locks, stale);
      return pair;
    } catch (error) {
      if (!(error instanceof SvcApiError) || error.status !== 401) throw error;
      if (error.code === 'auth.refresh_token_revoked') {
        // SPEC "Refresh token and login": a reuse inside the grace window is refused without revoking the
        // login, so the pair whoever used the token first got is still good: wait for it.
        const adopted = await pairFromElsewhere(current, graceMs - (Date.now() - startedAt));
        if (adopted) return adopted;
      }
      await signOut('refresh_failed');
      return null;
    }
  }

  return {
    refresh(stale) {
      if (!inFlight) {
        const locks = lockName ? webLocks() : undefined;
        const run = locks ? locks.request(lockName!, () => attempt(stale, locks)) : attempt(stale, undefined);
        inFlight = run.finally(() => {
          inFlight = undefined;
        });
      }
      return inFlight;
    },
    store,
    signOut,
    close() {
      channel?.close();
    },
  };
}
