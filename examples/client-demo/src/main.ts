// The example frontend (docs/client.md): log in (with the MFA step when the server asks for it), show the
// user's settings form rendered from the UI schema (docs/settings-ui-schema.md), and the live event stream.
import { createClient, SvcApiError, type EventsSubscription, type MfaStep } from '@svc/client';
import { renderSettingsForm } from './settings-form.js';
import { completeSocialSignIn, renderSocialButtons } from './social.js';

const client = createClient({ baseUrl: location.origin });

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const loginForm = byId<HTMLFormElement>('login-form');
const mfaForm = byId<HTMLFormElement>('mfa-form');
const app = byId<HTMLElement>('app');
const errorLine = byId<HTMLElement>('error');
const eventList = byId<HTMLOListElement>('events');
const eventsStatus = byId<HTMLElement>('events-status');

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
  const user = await client.user();
  byId('username').textContent = user.username;
  show('app');
  await renderSettingsForm(client, byId<HTMLFormElement>('settings'), showError);
  events?.close();
  eventList.replaceChildren();
  events = client.events({
    onEvent(event) {
      const item = document.createElement('li');
      // Event texts come from users (paths, usernames): shown as text, never as HTML (SPEC activity rules).
      item.textContent = `${event.timestamp ?? ''} ${event.type} ${JSON.stringify(event.data ?? null)}`;
      eventList.prepend(item);
    },
    onStatus: (status) => (eventsStatus.textContent = status),
    onSignedOut: () => void signOut(),
    onError: showError,
  });
}

async function signOut(): Promise<void> {
  events?.close();
  events = undefined;
  show('login');
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

byId('logout').addEventListener('click', () => void client.logout().catch(showError));
client.onSignedOut(() => void signOut());

// Social login (docs/social-login.md): back from a provider, the fragment is completed first (a login, or the
// MFA step); the buttons of the enabled providers sit under the password form.
async function start(): Promise<void> {
  const social = await completeSocialSignIn(client).catch((error: unknown) => (showError(error), null));
  if (social?.status === 'mfa-required') {
    pendingMfa = social;
    show('mfa');
  } else if (client.signedIn) await enterApp();
  // A tab opened while signed in (the pair is in localStorage) starts in the app.
  else show('login');
  await renderSocialButtons(client, byId('social-buttons'));
}
start().catch(showError);
