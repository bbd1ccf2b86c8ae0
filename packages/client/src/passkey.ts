import { base64urlBinary, webAuthn } from './platform.js';

// WebAuthn speaks ArrayBuffers, the server JSON with base64url (SPEC-2 section 6: "WebAuthn JSON"). Browsers
// with PublicKeyCredential.parseRequestOptionsFromJSON / toJSON do this themselves; these are the fallback.

function fromBase64url(text: string): ArrayBuffer {
  const binary = base64urlBinary(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

function toBase64url(buffer: ArrayBuffer | ArrayBufferView | null | undefined): string | undefined {
  if (!buffer) return undefined;
  const bytes =
    buffer instanceof ArrayBuffer
      ? new Uint8Array(buffer)
      : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

interface RequestOptionsJSON {
  challenge: string;
  allowCredentials?: { id: string; type: string; transports?: string[] }[];
  [key: string]: unknown;
}

interface CreationOptionsJSON {
  challenge: string;
  user: { id: string; [key: string]: unknown };
  excludeCredentials?: { id: string; type: string; transports?: string[] }[];
  [key: string]: unknown;
}

/** What a `PublicKeyCredential` has in common for both ceremonies; `R` is its response's buffers. */
interface CredentialLike<R> {
  id: string;
  rawId: ArrayBuffer;
  type: string;
  authenticatorAttachment?: string | null;
  response: R;
  getClientExtensionResults?(): unknown;
  toJSON?(): unknown;
}

type AttestationLike = CredentialLike<{
  clientDataJSON: ArrayBuffer;
  attestationObject: ArrayBuffer;
  getTransports?(): string[];
}>;

type AssertionLike = CredentialLike<{
  clientDataJSON: ArrayBuffer;
  authenticatorData: ArrayBuffer;
  signature: ArrayBuffer;
  userHandle: ArrayBuffer | null;
}>;

type PublicKeyCredentialStatics = {
  parseRequestOptionsFromJSON?(json: unknown): unknown;
  parseCreationOptionsFromJSON?(json: unknown): unknown;
};
const statics = () =>
  (globalThis as { PublicKeyCredential?: PublicKeyCredentialStatics }).PublicKeyCredential ?? {};

const NO_WEBAUTHN = 'passkeys need WebAuthn (navigator.credentials) in a secure context';

/** Credential descriptors (`excludeCredentials`, `allowCredentials`) with their ids as buffers. */
const decodeDescriptors = (list: { id: string; type: string; transports?: string[] }[] | undefined) =>
  list?.map((c) => ({ ...c, id: fromBase64url(c.id) }));

/**
 * The credential as the JSON the server verifies: its own `toJSON()` where the browser has one, else its
 * members base64url-encoded, with `response` encoded by the ceremony's `encodeResponse`.
 */
function credentialJSON<R>(
  credential: CredentialLike<R>,
  encodeResponse: (response: R) => Record<string, unknown>,
): unknown {
  if (typeof credential.toJSON === 'function') return credential.toJSON();
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults?.() ?? {},
    response: encodeResponse(credential.response),
  };
}

/** A new credential for the server's creation options, as the JSON the server verifies (registration). */
export async function createCredential(options: CreationOptionsJSON, signal?: AbortSignal): Promise<unknown> {
  const credentials = webAuthn();
  if (!credentials?.create) throw new Error(NO_WEBAUTHN);
  const parse = statics().parseCreationOptionsFromJSON;
  const publicKey = parse
    ? parse(options)
    : {
        ...options,
        challenge: fromBase64url(options.challenge),
        user: { ...options.user, id: fromBase64url(options.user.id) },
        excludeCredentials: decodeDescriptors(options.excludeCredentials),
      };
  const credential = (await credentials.create({ publicKey, signal })) as AttestationLike | null;
  if (!credential) throw new Error('no passkey was created');
  return credentialJSON(credential, (response) => ({
    clientDataJSON: toBase64url(response.clientDataJSON),
    attestationObject: toBase64url(response.attestationObject),
    transports: response.getTransports?.() ?? [],
  }));
}

/** The browser's assertion for the server's request options, as the JSON the server verifies. */
export async function getAssertion(options: RequestOptionsJSON, signal?: AbortSignal): Promise<unknown> {
  const credentials = webAuthn();
  if (!credentials) throw new Error(NO_WEBAUTHN);
  const parse = statics().parseRequestOptionsFromJSON;
  const publicKey = parse
    ? parse(options)
    : {
        ...options,
        challenge: fromBase64url(options.challenge),
        allowCredentials: decodeDescriptors(options.allowCredentials),
      };
  const credential = (await credentials.get({ publicKey, signal })) as AssertionLike | null;
  if (!credential) throw new Error('no passkey was chosen');
  return credentialJSON(credential, (response) => ({
    clientDataJSON: toBase64url(response.clientDataJSON),
    authenticatorData: toBase64url(response.authenticatorData),
    signature: toBase64url(response.signature),
    userHandle: toBase64url(response.userHandle),
  }));
}
