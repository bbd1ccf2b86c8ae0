// The state behind the hooks, free of React (docs/react.md "How it works"): one store per client, holding the
// session and the user, one event-stream subscription shared by every hook, and the organizations asked for.
// Snapshots are immutable objects replaced on each change, as useSyncExternalStore needs.
import {
  SvcApiError,
  type MfaStep,
  type SignedIn,
  type SvcClient,
  type SvcEvent,
  type SvcUser,
  type EventsSubscription,
} from '@svc/client';

/**
 * Where the session is: `loading` (a stored session is being read: `GET /auth/user`), `signed-out`,
 * `mfa-required` (a password was accepted and a second factor is due), `signed-in`.
 */
export type SessionStatus = 'loading' | 'signed-out' | 'mfa-required' | 'signed-in';

export interface SessionSnapshot {
  status: SessionStatus;
  /** The signed-in user (`GET /auth/user`, with `permissions`), else null. */
  user: SvcUser | null;
  /** The last refusal of a sign-in, MFA step or user read (for example `auth.invalid_credentials`), else null. */
  error: Error | null;
}

/** An organization as `GET /organizations/{org_id}` returns it (SPEC-3 section 2), with the caller's role in it. */
export interface SvcOrganization {
  id: string;
  slug: string;
  name: string;
  createdAt: string;
  /** The caller's role; null for a superuser who is not a member. */
  role: string | null;
  /** The organization permission codenames the caller holds in it. */
  permissions: string[];
}

export interface OrganizationSnapshot {
  status: 'loading' | 'ready' | 'error';
  organization: SvcOrganization | null;
  /** `organization.not_found` (also for an organization the caller is not a member of), or another refusal. */
  error: Error | null;
}

type Listener = () => void;
type EventHandler = (event: SvcEvent) => void;

/** Event types after which the user (and so `permissions`) is read again (SPEC "Event types and audience"). */
const USER_CHANGING_EVENTS = new Set(['user_permissions_changed']);
/** After which an organization the page shows is read again (SPEC-3 section 2). */
const MEMBERSHIP_CHANGED = 'organization_membership_changed';

const LOADING_ORG: OrganizationSnapshot = Object.freeze({
  status: 'loading',
  organization: null,
  error: null,
});

export interface SessionStoreOptions {
  /** Open the event stream while signed in (it keeps permissions current). @default true */
  events?: boolean;
}

export class SessionStore {
  readonly client: SvcClient;
  private snapshot: SessionSnapshot;
  private readonly listeners = new Set<Listener>();
  private mfa: MfaStep | undefined;
  /** Each user read has a number; only the latest one's answer is kept. */
  private reads = 0;
  private running = 0;
  private stopClient: (() => void)[] = [];
  private stream: EventsSubscription | undefined;
  private readonly eventHandlers = new Map<EventHandler, Set<string> | null>();
  private readonly organizations = new Map<
    string,
    { snapshot: OrganizationSnapshot; listeners: Set<Listener>; reads: number }
  >();
  private readonly withEvents: boolean;

  constructor(client: SvcClient, options: SessionStoreOptions = {}) {
    this.client = client;
    this.withEvents = options.events ?? true;
    this.snapshot = Object.freeze({
      status: client.signedIn ? 'loading' : 'signed-out',
      user: null,
      error: null,
    });
  }

  getSnapshot = (): SessionSnapshot => this.snapshot;

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private set(next: Partial<SessionSnapshot>): void {
    this.snapshot = Object.freeze({ ...this.snapshot, ...next });
    for (const listener of [...this.listeners]) listener();
    this.syncStream();
  }

  /**
   * Starts following the client (the provider's effect); counted, so that React's strict mode, which runs an
   * effect twice, leaves one follower.
   */
  start(): () => void {
    this.running += 1;
    if (this.running === 1) {
      this.stopClient = [
        this.client.onSignedOut(() => this.signedOut()),
        this.client.onSignedIn(() => void this.readUser()),
      ];
      if (this.client.signedIn) void this.readUser();
      else if (this.snapshot.status === 'loading') this.set({ status: 'signed-out' });
    }
    return () => {
      this.running -= 1;
      if (this.running > 0) return;
      for (const stop of this.stopClient) stop();
      this.stopClient = [];
      this.stream?.close();
      this.stream = undefined;
    };
  }

  private signedOut(): void {
    this.reads += 1; // a read on its way no longer counts
    this.mfa = undefined;
    this.set({ status: 'signed-out', user: null });
    for (const [id, entry] of this.organizations)
      if (entry.listeners.size === 0) this.organizations.delete(id);
  }

  /** Reads `GET /auth/user` again: after a login, a permission change, or when a page asks (`refresh`). */
  async readUser(): Promise<void> {
    const read = ++this.reads;
    if (this.snapshot.status !== 'signed-in') this.set({ status: 'loading' });
    try {
      const user = await this.client.user();
      if (read === this.reads) this.set({ status: 'signed-in', user, error: null });
    } catch (error) {
      if (read !== this.reads) return;
      // 401: the client found the session over (its onSignedOut follows for a revoked or unrefreshable one).
      if (error instanceof SvcApiError && error.status === 401) this.signedOut();
      else this.set({ error: error as Error });
    }
  }

  private async signedInWith(result: SignedIn): Promise<void> {
    this.mfa = undefined;
    if (result.user) {
      this.reads += 1;
      this.set({ status: 'signed-in', user: result.user, error: null });
    } else await this.readUser();
  }

  /** Runs a step of the sign-in, keeping its refusal in `error` (and rethrowing it for the caller). */
  private async attempt<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      this.set({ error: error as Error });
      throw error;
    }
  }

  signIn = (username: string, password: string): Promise<SessionStatus> =>
    this.attempt(async () => {
      const result = await this.client.login(username, password);
      if (result.status === 'mfa-required') {
        this.mfa = result;
        this.set({ status: 'mfa-required', error: null });
      } else await this.signedInWith(result);
      return this.snapshot.status;
    });

  /** The MFA step of a pending sign-in: a code (TOTP, email, SMS, backup) or a passkey. */
  verifyMfa = (code: string): Promise<SessionStatus> =>
    this.attempt(async () => {
      if (!this.mfa) throw new Error('no sign-in is waiting for a second factor');
      await this.signedInWith(await this.mfa.verifyMfa(code));
      return this.snapshot.status;
    });

  verifyWithPasskey = (): Promise<SessionStatus> =>
    this.attempt(async () => {
      if (!this.mfa) throw new Error('no sign-in is waiting for a second factor');
      await this.signedInWith(await this.mfa.verifyWithPasskey());
      return this.snapshot.status;
    });

  /** Abandons a pending MFA step: back to the password form. */
  cancelMfa = (): void => {
    this.mfa = undefined;
    if (this.snapshot.status === 'mfa-required') this.set({ status: 'signed-out', error: null });
  };

  refresh = (): Promise<void> => this.readUser();

  signOut = async (): Promise<void> => {
    await this.client.logout(); // its onSignedOut (here and in every tab) sets the state
  };

  /** The event stream: open while signed in and following the client; one socket for every hook. */
  private syncStream(): void {
    const wanted = this.withEvents && this.running > 0 && this.snapshot.status === 'signed-in';
    if (wanted && !this.stream) {
      this.stream = this.client.events({
        onEvent: (event) => this.dispatch(event),
        // The ticket was refused while signed in: read the user, which settles whether the session is over.
        onSignedOut: () => {
          this.stream = undefined;
          void this.readUser();
        },
        onError: () => undefined, // events off on the server (403, 404): the hooks simply hear nothing
      });
    } else if (!wanted && this.stream) {
      this.stream.close();
      this.stream = undefined;
    }
  }

  private dispatch(event: SvcEvent): void {
    const data = (event.data ?? {}) as { userId?: unknown; organizationId?: unknown };
    const me = this.snapshot.user?.id;
    if (USER_CHANGING_EVENTS.has(event.type) && data.userId === me) void this.readUser();
    if (event.type === MEMBERSHIP_CHANGED && data.userId === me && typeof data.organizationId === 'string') {
      const entry = this.organizations.get(data.organizationId);
      if (entry && entry.listeners.size > 0) void this.readOrganization(data.organizationId);
    }
    for (const [handler, types] of [...this.eventHandlers])
      if (!types || types.has(event.type)) handler(event);
  }

  /** `useEvents`: the handler hears the listed types (every type but `ping` with `types` null). */
  addEventHandler(types: readonly string[] | null, handler: EventHandler): () => void {
    this.eventHandlers.set(handler, types ? new Set(types) : null);
    return () => this.eventHandlers.delete(handler);
  }

  organizationSnapshot(id: string): OrganizationSnapshot {
    return this.organizations.get(id)?.snapshot ?? LOADING_ORG;
  }

  subscribeOrganization(id: string, listener: Listener): () => void {
    let entry = this.organizations.get(id);
    if (!entry) {
      entry = { snapshot: LOADING_ORG, listeners: new Set(), reads: 0 };
      this.organizations.set(id, entry);
    }
    entry.listeners.add(listener);
    if (entry.listeners.size === 1) void this.readOrganization(id);
    return () => entry.listeners.delete(listener);
  }

  /** `GET /organizations/{org_id}` through the client (cookie or bearer, refresh included). */
  async readOrganization(id: string): Promise<void> {
    const entry = this.organizations.get(id);
    if (!entry) return;
    const read = ++entry.reads;
    const publish = (snapshot: OrganizationSnapshot) => {
      if (read !== entry.reads) return;
      entry.snapshot = Object.freeze(snapshot);
      for (const listener of [...entry.listeners]) listener();
    };
    try {
      const response = await this.client.fetch(`/api/organizations/${encodeURIComponent(id)}`, {
        headers: { accept: 'application/json' },
      });
      if (!response.ok) throw await errorOf(response);
      const body = (await response.json()) as { data?: SvcOrganization } | SvcOrganization;
      const organization = 'data' in body && body.data ? body.data : (body as SvcOrganization);
      publish({ status: 'ready', organization, error: null });
    } catch (error) {
      publish({ status: 'error', organization: null, error: error as Error });
    }
  }
}

/** The refusal of a response in the uniform error format, as @svc/client reads it. */
async function errorOf(response: Response): Promise<SvcApiError> {
  let detail: ConstructorParameters<typeof SvcApiError>[1] = [];
  try {
    const body = (await response.json()) as { detail?: unknown };
    if (Array.isArray(body.detail)) detail = body.detail as typeof detail;
  } catch {
    // not JSON: the client's own code below
  }
  return new SvcApiError(response.status, detail);
}
