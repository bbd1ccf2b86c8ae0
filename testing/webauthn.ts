// A software WebAuthn authenticator for tests (SPEC-2 "Passkeys"): ES256 keys from node:crypto, `none`
// attestation, the attestation object CBOR-encoded here (WebAuthn Level 3 §6.1 authenticator data, §6.5.4
// attestation object, RFC 8949 CBOR, RFC 9053 COSE keys). It answers the JSON options of the server the way
// `PublicKeyCredential.toJSON()` does in a browser, and can misbehave on request (no user verification, a
// foreign origin, a counter going backwards).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/** The CBOR values this authenticator writes (RFC 8949): integers, byte and text strings, maps. */
type Cbor = number | string | Uint8Array | Map<number | string, Cbor> | { [key: string]: Cbor };

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(length, 1);
  return out;
}

/** CBOR encoding of the few shapes WebAuthn needs (RFC 8949 §3.1). */
export function encodeCbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([
    head(5, entries.length),
    ...entries.flatMap(([k, v]) => [encodeCbor(k), encodeCbor(v)]),
  ]);
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64url = (data: Uint8Array) => Buffer.from(data).toString('base64url');

/** Authenticator data flags (WebAuthn §6.1). */
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

interface StoredCredential {
  id: Buffer;
  privateKey: KeyObject;
  publicKey: KeyObject;
  rpId: string;
  userHandle: string;
  counter: number;
}

/** How a ceremony should (mis)behave. */
export interface CeremonyOverrides {
  /** Origin written in client data. @default the authenticator's origin */
  origin?: string;
  /** Set the user-verified flag. @default true */
  userVerified?: boolean;
  /** Signature counter to report (default: one more than the last). */
  counter?: number;
  /** Answer with this credential (base64url id) whatever the options allow. */
  credentialId?: string;
  /** Leave out the user handle of a discoverable credential. */
  omitUserHandle?: boolean;
}

interface CreationOptionsJson {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string; name: string };
}

interface RequestOptionsJson {
  challenge: string;
  rpId?: string;
  allowCredentials?: { id: string }[];
}

/** A software authenticator holding ES256 passkeys, discoverable, with user verification. */
export class SoftAuthenticator {
  readonly credentials: StoredCredential[] = [];

  constructor(readonly origin: string) {}

  /** Answers `navigator.credentials.create()` options: the registration response JSON. */
  create(options: CreationOptionsJson, overrides: CeremonyOverrides = {}) {
    const rpId = options.rp.id ?? new URL(this.origin).hostname;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const credential: StoredCredential = {
      id: randomBytes(16),
      privateKey,
      publicKey,
      rpId,
      userHandle: options.user.id,
      counter: overrides.counter ?? 0,
    };
    const jwk = publicKey.export({ format: 'jwk' });
    // RFC 9053 §7.1: EC2 key, ES256, P-256, x and y.
    const coseKey = new Map<number, Cbor>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credential.id.length);
    const authData = Buffer.concat([
      this.authData(rpId, AT | UP | (overrides.userVerified === false ? 0 : UV), credential.counter),
      Buffer.alloc(16), // AAGUID: none
      idLength,
      credential.id,
      encodeCbor(coseKey),
    ]);
    const clientData = this.clientData('webauthn.create', options.challenge, overrides);
    this.credentials.push(credential);
    return this.credentialJson(credential, {
      clientDataJSON: b64url(clientData),
      attestationObject: b64url(encodeCbor({ fmt: 'none', attStmt: {}, authData })),
      // WebAuthn getTransports(): sorted lexicographically.
      transports: ['hybrid', 'internal'],
    });
  }

  /** Answers `navigator.credentials.get()` options: the authentication response JSON. */
  get(options: RequestOptionsJson, overrides: CeremonyOverrides = {}) {
    const allowed = (options.allowCredentials ?? []).map((c) => c.id);
    const credential = this.credentials.find((c) =>
      overrides.credentialId
        ? b64url(c.id) === overrides.credentialId
        : (allowed.length === 0 || allowed.includes(b64url(c.id))) &&
          (!options.rpId || c.rpId === options.rpId),
    );
    if (!credential) throw new Error('the authenticator holds no credential these options allow');
    credential.counter = overrides.counter ?? credential.counter + 1;
    const authData = this.authData(
      credential.rpId,
      UP | (overrides.userVerified === false ? 0 : UV),
      credential.counter,
    );
    const clientData = this.clientData('webauthn.get', options.challenge, overrides);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), credential.privateKey);
    return this.credentialJson(credential, {
      clientDataJSON: b64url(clientData),
      authenticatorData: b64url(authData),
      signature: b64url(signature),
      ...(overrides.omitUserHandle ? {} : { userHandle: credential.userHandle }),
    });
  }

  /** A ceremony's answer as `PublicKeyCredential.toJSON()` writes it, around its `response` members. */
  private credentialJson<R>(credential: StoredCredential, response: R) {
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key' as const,
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response,
    };
  }

  private authData(rpId: string, flags: number, counter: number): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count]);
  }

  private clientData(type: string, challenge: string, overrides: CeremonyOverrides): Buffer {
    return Buffer.from(
      JSON.stringify({ type, challenge, origin: overrides.origin ?? this.origin, crossOrigin: false }),
    );
  }
}

/** The origin of {@link PASSKEY_TEST_SETTINGS}. */
export const PASSKEY_TEST_ORIGIN = 'https://app.example.test';

/** The settings of the passkey tests: the relying party the software authenticator answers for. */
export const PASSKEY_TEST_SETTINGS = {
  passkeys_enabled: true,
  webauthn_rp_id: 'example.test',
  webauthn_rp_name: 'Example',
  webauthn_origins: PASSKEY_TEST_ORIGIN,
} as const;

/** The few client calls the passkey steps make (a `TestClient` of `@svc/core/testing`). */
interface Client {
  post(path: string, body?: unknown): Promise<{ status: number; body: any; text: string; headers: Headers }>;
}

/** Registers a passkey over HTTP (options, then the authenticator's answer); the response of the register route. */
export async function registerPasskey(
  client: Client,
  authenticator: SoftAuthenticator,
  options: { name?: string; overrides?: CeremonyOverrides } = {},
) {
  const started = await client.post('/api/auth/passkeys/register/options');
  if (started.status !== 200) throw new Error(`register options: ${started.status} ${started.text}`);
  const response = authenticator.create(started.body.data, options.overrides);
  return client.post('/api/auth/passkeys/register', {
    response,
    ...(options.name ? { name: options.name } : {}),
  });
}

/** `POST /auth/passkey/options`; its `{challengeId, options}`. */
export async function passkeyOptions(client: Client, username?: string) {
  const res = await client.post('/api/auth/passkey/options', username === undefined ? {} : { username });
  if (res.status !== 200) throw new Error(`passkey options: ${res.status} ${res.text}`);
  return res.body.data as { challengeId: string; options: RequestOptionsJson & Record<string, unknown> };
}

/** A passkey login over HTTP: options (with `username` when given), the assertion, `POST /auth/passkey/token`. */
export async function passkeyLogin(
  client: Client,
  authenticator: SoftAuthenticator,
  options: { username?: string; overrides?: CeremonyOverrides } = {},
) {
  const { challengeId, options: request } = await passkeyOptions(client, options.username);
  const response = authenticator.get(request, options.overrides);
  return client.post('/api/auth/passkey/token', { challengeId, response });
}
