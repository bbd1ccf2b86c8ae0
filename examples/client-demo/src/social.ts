// Social login in the example (docs/social-login.md "The frontend"): a button per enabled provider, and the
// completion of what the provider's callback came back with (the fragment, removed from the address bar).
import type { LoginResult, SvcClient } from '@svc/client';

/** Renders "Sign in with <label>" for each enabled provider into `container` (nothing when none is enabled). */
export async function renderSocialButtons(client: SvcClient, container: HTMLElement): Promise<void> {
  const providers = await client.oauthProviders();
  container.replaceChildren(
    ...providers.map((provider) => {
      const button = document.createElement('button');
      button.type = 'button';
      // Labels come from the server's settings: shown as text.
      button.textContent = `Sign in with ${provider.label}`;
      button.addEventListener('click', () =>
        client.signInWith(provider.name, { redirectTo: location.pathname }),
      );
      return button;
    }),
  );
}

/** The login the page came back with from a provider, if any (a link done or nothing: null). */
export async function completeSocialSignIn(client: SvcClient): Promise<LoginResult | null> {
  const result = await client.completeSignIn();
  return result && result.status !== 'linked' ? result : null;
}
