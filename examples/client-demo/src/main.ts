// The example frontend (docs/client.md): log in (with the MFA step when the server asks for it), show the
// user's settings form rendered from the UI schema (docs/settings-ui-schema.md), and the live event stream.
// The session lives in the server's HttpOnly cookies (docs/browser-sessions.md): no token is readable by the
// page's scripts. `?session=bearer` uses the bearer mode instead (tokens in localStorage), for a server
// without `cookie_sessions_enabled`. A superuser can impersonate a user (SPEC-3 section 4, where the server
// has `impersonation_enabled`): the page then works as that user and says so, until "end".
import {
  createClient,
  memoryStorage,
  SvcApiError,
  type EventsSubscription,
  type MfaStep,
  type SvcClient,
} from '@svc/client';
import { renderOrganizations } from './organizations.js';
import { renderSettingsForm } from './settings-form.js';
import { completeSocialSignIn, renderSocialButtons } from './social.js';

const session = new URLSearchParams(location.search).get('session') === 'bearer' ? 'bearer' : 'cookie';
/** The signed-in user's own client. */
const client = createClient({ baseUrl: location.origin, session });
/**
 * The client the page works with: `client`, or while impersonating a client of the impersonation's access
 * token. That token is kept in this page's memory only (not in storage, not in a cookie): reloading the page
 * or "end" returns to the superuser's own session.
 */
let current: SvcClient = client;

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const loginForm = byId<HTMLFormElement>('login-form');
const mfaForm = byId<HTMLFormElement>('mfa-form');
const app = byId<HTMLElement>('app');
const errorLine = byId<HTMLElement>('error');
const eventList = byId<HTMLOListElement>('events');
const eventsStatus = byId<HTMLElement>('events-status');
const impersonating = byId<HTMLElement>('impersonating');
const impersonateForm = byId<HTMLFormElement>('impersonate-form');

let pendingMfa: MfaStep | undefined;
let events: EventsSubscription | undefined;

/** The server's message for a refused call (already in the request's language), or the error's own. */
function showError(error: unknown): void {
  errorLine.textContent = error instanceof SvcApiError ? `${error.message} (${error.code})` : String(error);
}

function show(view: 'login' | 'mfa' | 'app'): void {
  loginForm.hidden = view !== 'login';
  mfaForm.hidden = view !== 'mfa';
  app.hidden = view !== 'app';
}

async function enterApp(): Promise<void> {
  errorLine.textContent = '';
  const user = await current.user();
  byId('username').textContent = user.username;
  // GET /auth/user names the superuser while they impersonate (SPEC-3 section 4).
  impersonating.hidden = !user.impersonatedBy;
  byId('impersonated').textContent = user.impersonatedBy ? user.username : '';
  impersonateForm.hidden = !user.isSuperuser || !!user.impersonatedBy;
  show('app');
  await renderSettingsForm(current, byId<HTMLFormElement>('settings'), showError);
  // Organizations are optional on the server (`organizations_enabled`): a 404 there leaves the panel empty.
  await renderOrganizations(current, showError).catch(() => undefined);
  events?.close();
  eventList.replaceChildren();
  // A stream's "signed out" (close code 4401) is about the session it was opened with: the superuser's own
  // signs the page out, an impersonation's ends the impersonation, and one that has already been replaced
  // (its session ended by "end") changes nothing.
  const owner = current;
  const subscription = current.events({
    onEvent(event) {
      const item = document.createElement('li');
      // Event texts come from users (paths, usernames): shown as text, never as HTML (SPEC activity rules).
      item.textContent = `${event.timestamp ?? ''} ${event.type} ${JSON.stringify(event.data ?? null)}`;
      eventList.prepend(item);
    },
    onStatus: (status) => (eventsStatus.textContent = status),
    onSignedOut: () => {
      if (events !== subscription) return;
      void (owner === client ? signOut() : endImpersonation());
    },
    onError: showError,
  });
  events = subscription;
}

async function signOut(): Promise<void> {
  events?.close();
  events = undefined;
  current = client;
  show('login');
}

/**
 * Starts impersonating a user found by name: `POST /admin/user/{user_id}/impersonate` gives an access token of
 * that user (no refresh token) in a session of its own; the page works with it until "end".
 */
async function impersonate(username: string, reason: string): Promise<void> {
  const found = await client.api.GET('/api/admin/user/', { params: { query: { search: username } } });
  const user = found.data?.data.items.find((item) => item.username === username);
  if (!user) throw new Error(`no user named ${username}`);
  const response = await client.fetch(`/api/admin/user/${encodeURIComponent(user.id)}/impersonate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ reason }),
  });
  if (!response.ok) throw await errorOf(response);
  const body = (await response.json()) as { access_token?: string; data?: { access_token?: string } };
  const accessToken = body.access_token ?? body.data?.access_token;
  if (!accessToken) throw new Error('the server answered no access token');
  const storage = memoryStorage();
  await storage.set({ accessToken, refreshToken: null });
  current = createClient({ baseUrl: location.origin, storage, crossTab: false });
  await enterApp();
}

/** Ends the impersonation: `POST /auth/logout` with its token ends that session only (SPEC-3 section 4). */
async function endImpersonation(): Promise<void> {
  const impersonation = current;
  current = client;
  // The impersonation's event stream goes first, so that the end of its session is not taken for the
  // superuser's own sign-out.
  events?.close();
  events = undefined;
  if (impersonation !== client) await impersonation.logout().catch(showError);
  if (client.signedIn) await enterApp();
  else await signOut();
}

/** The refusal of a response in the uniform error format. */
async function errorOf(response: Response): Promise<SvcApiError> {
  const body = (await response.json().catch(() => ({}))) as { detail?: never[] };
  return new SvcApiError(response.status, body.detail ?? []);
}

loginForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const form = new FormData(loginForm);
  client
    .login(String(form.get('username')), String(form.get('password')))
    .then(async (result) => {
      loginForm.reset();
      if (result.status === 'mfa-required') {
        pendingMfa = result;
        errorLine.textContent = '';
        show('mfa');
      } else await enterApp();
    })
    .catch(showError);
});

mfaForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const code = String(new FormData(mfaForm).get('code'));
  pendingMfa!
    .verifyMfa(code)
    .then(async () => {
      mfaForm.reset();
      pendingMfa = undefined;
      await enterApp();
    })
    .catch((error: unknown) => {
      showError(error);
      // The challenge is gone after too many wrong codes: start over with the password.
      if (error instanceof SvcApiError && error.code === 'mfa.too_many_attempts') show('login');
    });
});

impersonateForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const form = new FormData(impersonateForm);
  impersonate(String(form.get('username')), String(form.get('reason')))
    .then(() => impersonateForm.reset())
    .catch(showError);
});

byId('end-impersonation').addEventListener('click', () => void endImpersonation());
byId('logout').addEventListener('click', () => {
  // Logging out while impersonating ends the impersonation, then the superuser's own session.
  const ending = current === client ? Promise.resolve() : endImpersonation();
  void ending.then(() => client.logout()).catch(showError);
});
client.onSignedOut(() => void signOut());

// Social login (docs/social-login.md): back from a provider, the fragment is completed first (a login, or the
// MFA step); the buttons of the enabled providers sit under the password form.
async function start(): Promise<void> {
  const social = await completeSocialSignIn(client).catch((error: unknown) => (showError(error), null));
  if (social?.status === 'mfa-required') {
    pendingMfa = social;
    show('mfa');
  } else if (client.signedIn) await enterApp();
  // A tab opened while signed in (the session cookies, or the pair in localStorage) starts in the app.
  else show('login');
  await renderSocialButtons(client, byId('social-buttons'));
}
start().catch(showError);
