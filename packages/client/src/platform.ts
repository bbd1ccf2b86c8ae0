// The browser APIs the client uses when they exist, typed by what it needs of them: the package builds for
// browsers and Node >= 20 alike, and Node has no Web Locks, no localStorage and no WebAuthn.

/** The part of the Web Locks API (`navigator.locks`) the refresh uses. */
export interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
  query(): Promise<{ held?: { name?: string }[] }>;
}

/** The part of `BroadcastChannel` the refresh uses. */
export interface ChannelLike {
  postMessage(message: unknown): void;
  close(): void;
  onmessage: ((event: { data: unknown }) => void) | null;
}

/** The part of the Web Storage API (`localStorage`) the default storage uses. */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * What the event stream needs of a WebSocket: the browser's, Node 22's global, or the `ws` package's. The
 * handlers' event types differ between those three; the client reads only `data` and `code` from them.
 */
export interface WebSocketLike {
  readonly readyState: number;
  /* eslint-disable @typescript-eslint/no-explicit-any -- each implementation has its own event classes */
  onmessage: ((event: any) => void) | null;
  onclose: ((event: any) => void) | null;
  onerror: ((event: any) => void) | null;
  /* eslint-enable @typescript-eslint/no-explicit-any */
  close(code?: number, reason?: string): void;
}

/** A WebSocket constructor (`globalThis.WebSocket`, or `WebSocket` from the `ws` package on Node 20). */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** `navigator.credentials` (WebAuthn). */
export interface CredentialsLike {
  get(options: { publicKey: unknown; signal?: AbortSignal }): Promise<unknown>;
  create?(options: { publicKey: unknown; signal?: AbortSignal }): Promise<unknown>;
}

// The DOM's types say these globals are always there; on Node they are not, so they are read as optional.
const global = globalThis as unknown as {
  navigator?: { locks?: LockManagerLike; credentials?: CredentialsLike };
  BroadcastChannel?: new (name: string) => ChannelLike;
  localStorage?: StorageLike;
  sessionStorage?: StorageLike;
  WebSocket?: WebSocketConstructor;
  window?: unknown;
};

/** True in a page (a window), where tabs of one origin share storage and coordinate. */
export const inBrowser = (): boolean => typeof global.window === 'object' && global.window !== null;

export const webLocks = (): LockManagerLike | undefined =>
  typeof global.navigator?.locks?.request === 'function' ? global.navigator.locks : undefined;

export function openChannel(name: string): ChannelLike | undefined {
  return typeof global.BroadcastChannel === 'function' ? new global.BroadcastChannel(name) : undefined;
}

export function browserStorage(): StorageLike | undefined {
  try {
    return global.localStorage ?? undefined; // throws in some privacy modes
  } catch {
    return undefined;
  }
}

/** This tab's `sessionStorage`, where there is one. */
export function tabStorage(): StorageLike | undefined {
  try {
    return global.sessionStorage ?? undefined; // throws in some privacy modes
  } catch {
    return undefined;
  }
}

export const globalWebSocket = (): WebSocketConstructor | undefined => global.WebSocket;

export const webAuthn = (): CredentialsLike | undefined =>
  typeof global.navigator?.credentials?.get === 'function' ? global.navigator.credentials : undefined;

/** The bytes of a base64url text (a JWT part, a WebAuthn field), padded or not, as `atob` gives them. */
export function base64urlBinary(text: string): string {
  return atob(
    text
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .padEnd(Math.ceil(text.length / 4) * 4, '='),
  );
}
