import type * as SimpleWebAuthn from '@simplewebauthn/server';
import type * as SimpleWebAuthnHelpers from '@simplewebauthn/server/helpers';

let server: Promise<typeof SimpleWebAuthn> | undefined;
let helpers: Promise<typeof SimpleWebAuthnHelpers> | undefined;

/**
 * @simplewebauthn/server, imported on the first passkey ceremony instead of with @svc/core: with its ASN.1
 * and certificate packages it was 300 of the 1,112 modules `import('@svc/core')` loaded, for every `svc` command
 * and every server start, passkeys on or off (docs/performance.md "The CLI's start").
 */
export function webauthn(): Promise<typeof SimpleWebAuthn> {
  return (server ??= import('@simplewebauthn/server'));
}

/** @simplewebauthn/server/helpers, imported on first use like {@link webauthn}. */
export function webauthnHelpers(): Promise<typeof SimpleWebAuthnHelpers> {
  return (helpers ??= import('@simplewebauthn/server/helpers'));
}
