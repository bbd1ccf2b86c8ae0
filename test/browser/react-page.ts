// The page of test/browser/react-tabs.test.ts: a small React app on @svc/react over @svc/client in cookie mode,
// bundled by esbuild (testing/client.ts `bundleReactPage`). It renders the session's status, the user, whether
// `useCan('notes.edit')` holds and how often that component rendered, and the types of the events `useEvents('*')` heard (the snapshot first); the
// test drives it through the DOM (the login form, the sign-out button) and `window.session`.
import { createElement as h, useEffect, useRef, version, type FormEvent } from 'react';
import { createRoot } from 'react-dom/client';
import { createClient } from '@svc/client';
import { SvcProvider, useCan, useEvents, useSession, type Session } from '@svc/react';

const page = globalThis as unknown as {
  client: ReturnType<typeof createClient>;
  session: Session;
  heard: string[];
  canRenders: number;
  ready: boolean;
  location: { origin: string };
  document: { getElementById(id: string): unknown };
};

const client = createClient({ baseUrl: page.location.origin, session: 'cookie' });
page.client = client;
page.heard = [];
page.canRenders = 0;

function Can() {
  const can = useCan('notes.edit');
  page.canRenders += 1;
  return h('p', { id: 'can' }, can ? 'can edit' : 'cannot edit');
}

function LoginForm({ onLogin }: { onLogin(username: string, password: string): Promise<unknown> }) {
  // Typed by what is read of them: the repository's typecheck has no DOM library.
  const username = useRef<{ value: string }>(null);
  const password = useRef<{ value: string }>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void onLogin(username.current!.value, password.current!.value).catch(() => undefined);
  };
  return h(
    'form',
    { id: 'login', onSubmit: submit },
    h('input', { name: 'username', ref: username }),
    h('input', { name: 'password', type: 'password', ref: password }),
    h('button', { type: 'submit' }, 'Sign in'),
  );
}

function App() {
  const session = useSession();
  useEffect(() => {
    page.session = session;
  });
  useEvents('*', (event) => page.heard.push(event.type));
  return h(
    'main',
    null,
    h('p', { id: 'status' }, session.status),
    session.status === 'signed-out' && h(LoginForm, { onLogin: session.signIn }),
    session.user &&
      h(
        'div',
        null,
        h('p', { id: 'user' }, session.user.username),
        h(Can),
        h('button', { id: 'sign-out', type: 'button', onClick: () => void session.signOut() }, 'Sign out'),
      ),
    session.error && h('p', { id: 'error' }, session.error.message),
  );
}

createRoot(page.document.getElementById('root') as Parameters<typeof createRoot>[0]).render(
  h(SvcProvider, { client }, h(App)),
);
/** The React that rendered the page (the peer range is 18 and 19: both are bundled by the test). */
(page as unknown as { reactVersion: string }).reactVersion = version;
page.ready = true;
