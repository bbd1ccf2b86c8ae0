import { base64urlBinary, browserStorage, tabStorage, type StorageLike } from './platform.js';

/** The token pair of a login (SPEC "Tokens (JWT)"). `refreshToken` is null when the server does not rotate. */
export interface TokenPair {
  accessToken: string;
  refreshToken: string | null;
}

/**
 * Where the client keeps the token pair. `get` may be called on every request: keep it cheap. A storage that
 * tabs share (`localStorage`) lets a tab see the pair another tab got; say so with `shared: true`.
 */
export interface TokenStorage {
  get(): TokenPair | null | Promise<TokenPair | null>;
  set(pair: TokenPair | null): void | Promise<void>;
  /** True when other tabs or clients read and write the same pair. @default false */
  readonly shared?: boolean;
}

/** The pair in this client's memory only (the Node default): gone when the process or page ends. */
export function memoryStorage(): TokenStorage {
  let pair: TokenPair | null = null;
  return {
    get: () => pair,
    set(next) {
      pair = next;
    },
  };
}

/**
 * The pair in `localStorage` under `key` (the browser default): every tab of the origin shares it, so a login
 * or a refresh in one tab is every tab's. Anything running in the page can read it (docs/client.md "Storage").
 * @example createClient({ baseUrl, storage: localTokenStorage('my-app.auth') })
 */
export function localTokenStorage(key = 'svc.auth', storage?: StorageLike): TokenStorage {
  const store = storage ?? browserStorage();
  if (!store) throw new Error('localTokenStorage: no localStorage here; use memoryStorage()');
  return webTokenStorage(key, store, true);
}

/**
 * The pair in this tab's `sessionStorage` under `key`: a reload keeps it, closing the tab ends it, and no other
 * tab sees it (each tab signs in on its own; pass `crossTab: false`). Readable by the page's scripts as
 * `localStorage` is (docs/client.md "Storage").
 * @example createClient({ baseUrl, storage: sessionTokenStorage('my-admin.auth'), crossTab: false })
 */
export function sessionTokenStorage(key = 'svc.auth', storage?: StorageLike): TokenStorage {
  const store = storage ?? tabStorage();
  if (!store) throw new Error('sessionTokenStorage: no sessionStorage here; use memoryStorage()');
  return webTokenStorage(key, store, false);
}

/** The pair as JSON under `key` of a Web Storage; `shared` when other tabs read and write the same one. */
function webTokenStorage(key: string, store: StorageLike, shared: boolean): TokenStorage {
  return {
    shared,
    get() {
      const text = store.getItem(key);
      if (!text) return null;
      try {
        const parsed = JSON.parse(text) as Partial<TokenPair>;
        return typeof parsed.accessToken === 'string'
          ? { accessToken: parsed.accessToken, refreshToken: parsed.refreshToken ?? null }
          : null;
      } catch {
        return null;
      }
    },
    set(pair) {
      if (pair) store.setItem(key, JSON.stringify(pair));
      else store.removeItem(key);
    },
  };
}

/** The `exp` claim of a JWT (seconds), read without verifying it (the server verifies). */
export function expiresAt(token: string): number | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const exp = (JSON.parse(base64urlBinary(part)) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp : undefined;
  } catch {
    return undefined;
  }
}
