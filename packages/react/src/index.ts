// @svc/react: React bindings of @svc/client (docs/react.md). Written with createElement rather than JSX, so
// the package needs no JSX runtime setting of its consumers and builds with plain tsc.
import {
  createContext,
  createElement,
  useCallback,
  useContext,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useSyncExternalStore,
  type ReactNode,
} from 'react';
import type { SvcClient, SvcEvent, SvcUser } from '@svc/client';
import {
  SessionStore,
  type OrganizationSnapshot,
  type SessionSnapshot,
  type SessionStatus,
} from './store.js';

export type { OrganizationSnapshot, SessionSnapshot, SessionStatus, SvcOrganization } from './store.js';

const StoreContext = createContext<SessionStore | null>(null);

export interface SvcProviderProps {
  /** The client every hook below uses (`createClient({ baseUrl, session: 'cookie' })`). */
  client: SvcClient;
  /**
   * Open the event stream while signed in: it keeps `useCan` current when permissions change and feeds
   * `useEvents`. One socket per provider, whatever the number of hooks. @default true
   */
  events?: boolean;
  children?: ReactNode;
}

/**
 * Makes `client` the one the hooks below use, and follows its session (here and in the origin's other tabs).
 * @example
 * const client = createClient({ baseUrl: location.origin, session: 'cookie' });
 * createRoot(root).render(<SvcProvider client={client}><App /></SvcProvider>);
 */
export function SvcProvider({ client, events = true, children }: SvcProviderProps) {
  const store = useMemo(() => new SessionStore(client, { events }), [client, events]);
  useEffect(() => store.start(), [store]);
  return createElement(StoreContext.Provider, { value: store }, children);
}

function useStore(): SessionStore {
  const store = useContext(StoreContext);
  if (!store) throw new Error('@svc/react: a hook is used outside <SvcProvider client={...}>');
  return store;
}

function useSnapshot(): SessionSnapshot {
  const store = useStore();
  return useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
}

/** What {@link useSession} returns. The functions are stable (the same between renders). */
export interface Session extends SessionSnapshot {
  /** Password sign-in; resolves with the new status (`mfa-required` when a second factor is due); rejects on a refusal. */
  signIn(username: string, password: string): Promise<SessionStatus>;
  /** Ends the session here and in every tab of the origin. */
  signOut(): Promise<void>;
  /** The pending MFA step (status `mfa-required`), else null. */
  mfa: {
    /** A TOTP, email or SMS code or a backup code (`POST /mfa/verify`). */
    verify(code: string): Promise<SessionStatus>;
    /** A passkey as second factor (SPEC-2 section 6). */
    verifyWithPasskey(): Promise<SessionStatus>;
    /** Back to the password form. */
    cancel(): void;
  } | null;
  /** Reads the user again (`GET /auth/user`); the event stream does this by itself when permissions change. */
  refresh(): Promise<void>;
  /** The client, for calls the hooks do not cover (`client.fetch`, `client.api`). */
  client: SvcClient;
}

/**
 * The session: its status and user, and the functions that change it.
 * @example
 * const { status, user, signIn, signOut, mfa } = useSession();
 * if (status === 'mfa-required') return <CodeForm onCode={mfa!.verify} />;
 */
export function useSession(): Session {
  const store = useStore();
  const snapshot = useSnapshot();
  const mfa = useMemo(
    () => ({ verify: store.verifyMfa, verifyWithPasskey: store.verifyWithPasskey, cancel: store.cancelMfa }),
    [store],
  );
  return {
    ...snapshot,
    signIn: store.signIn,
    signOut: store.signOut,
    mfa: snapshot.status === 'mfa-required' ? mfa : null,
    refresh: store.refresh,
    client: store.client,
  };
}

/** The signed-in user (`GET /auth/user`), or null; re-renders when it is read again. */
export function useUser(): SvcUser | null {
  return useSnapshot().user;
}

const NO_PERMISSIONS: readonly string[] = Object.freeze([]);

/** The signed-in user's permission codenames (`user.permissions`), kept current by the event stream. */
export function usePermissions(): readonly string[] {
  return useSnapshot().user?.permissions ?? NO_PERMISSIONS;
}

/**
 * Whether the signed-in user holds `codename` (superusers hold every one, SPEC "Route protection rules").
 * Re-renders when a `user_permissions_changed` event makes the client read the user again. The server
 * decides on each request all the same: this is for what the page shows.
 */
export function useCan(codename: string): boolean {
  const store = useStore();
  const select = useCallback(() => {
    const user = store.getSnapshot().user;
    return !!user && (user.isSuperuser || user.permissions.includes(codename));
  }, [store, codename]);
  return useSyncExternalStore(store.subscribe, select, select);
}

/** What {@link useOrganization} returns. */
export interface OrganizationState extends OrganizationSnapshot {
  /** Reads it again. */
  reload(): Promise<void>;
}

/**
 * One organization (`GET /organizations/{org_id}`, SPEC-3 section 2) with the caller's `role` and `permissions`
 * in it; read again when the caller's membership in it changes (`organization_membership_changed`). An
 * organization the caller is not a member of is `status: 'error'` with `organization.not_found`.
 * Pass null or undefined to read nothing (status `loading`).
 */
export function useOrganization(id: string | null | undefined): OrganizationState {
  const store = useStore();
  const subscribe = useCallback(
    (listener: () => void) => (id ? store.subscribeOrganization(id, listener) : () => undefined),
    [store, id],
  );
  const get = useCallback(() => store.organizationSnapshot(id ?? ''), [store, id]);
  const snapshot = useSyncExternalStore(subscribe, get, get);
  const reload = useCallback(() => (id ? store.readOrganization(id) : Promise.resolve()), [store, id]);
  return { ...snapshot, reload };
}

/** useLayoutEffect where there is a DOM, useEffect on a server render (where neither runs). */
const useIsomorphicLayoutEffect =
  typeof (globalThis as { document?: unknown }).document === 'undefined' ? useEffect : useLayoutEffect;

/**
 * Calls `handler` with each event of the listed `types` from the provider's event stream (SPEC "Events"),
 * or every event but `ping` with `'*'`. The latest handler is called: no need to memoize it.
 * @example useEvents(['user_permissions_changed'], (event) => toast(`${event.type}`));
 */
export function useEvents<T = unknown>(
  types: readonly string[] | '*',
  handler: (event: SvcEvent<T>) => void,
): void {
  const store = useStore();
  const latest = useRef(handler);
  useIsomorphicLayoutEffect(() => {
    latest.current = handler;
  });
  const key = types === '*' ? '*' : [...types].sort().join('\n');
  useEffect(
    () =>
      store.addEventHandler(key === '*' ? null : key.split('\n'), (event) =>
        latest.current(event as SvcEvent<T>),
      ),
    [store, key],
  );
}
