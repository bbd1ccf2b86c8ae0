import { z } from 'zod';
import { UserIdParam } from '../kernel/identity.js';
import { CREDENTIAL_ID_MAX_LENGTH, PASSKEY_NAME_MAX_LENGTH } from './constants.js';

// SPEC-2 "Passkeys": the WebAuthn JSON forms (WebAuthn Level 3 `toJSON()` / `parse*OptionsFromJSON`), as the
// browser's PublicKeyCredential.toJSON() and @simplewebauthn/browser produce and take them.

const Base64Url = z.string().regex(/^[A-Za-z0-9_-]*$/, 'base64url');
/** Client data, authenticator data, attestation objects: kilobytes at most (extensions included). */
const Blob = Base64Url.max(65_536);
const CredentialId = Base64Url.min(1).max(CREDENTIAL_ID_MAX_LENGTH);
const Transports = z.array(z.string().max(32)).max(16);

const CredentialFields = {
  id: CredentialId,
  rawId: CredentialId,
  type: z.literal('public-key'),
  authenticatorAttachment: z.string().max(32).nullish(),
  clientExtensionResults: z.record(z.string(), z.unknown()).optional().default({}),
};

/** What `navigator.credentials.create()` returned, as JSON. */
export const RegistrationResponse = z.object({
  ...CredentialFields,
  response: z.object({
    clientDataJSON: Blob,
    attestationObject: Blob,
    authenticatorData: Blob.optional(),
    transports: Transports.optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: Blob.optional(),
  }),
});

/** What `navigator.credentials.get()` returned, as JSON. */
export const AuthenticationResponse = z.object({
  ...CredentialFields,
  response: z.object({
    clientDataJSON: Blob,
    authenticatorData: Blob,
    signature: Blob,
    userHandle: Base64Url.max(128).nullish(),
  }),
});

const PasskeyName = z.string().trim().min(1).max(PASSKEY_NAME_MAX_LENGTH);

/** `POST /auth/passkeys/register`. */
export const RegisterBody = z.object({ response: RegistrationResponse, name: PasskeyName.optional() });

/** `PATCH /auth/passkeys/{id}`. */
export const RenameBody = z.object({ name: PasskeyName });

export const PasskeyIdParams = z.object({ id: z.string().max(64) });
/** `/admin/user/{user_id}/passkeys` (svc extension of SPEC-3 §6). */
export const UserPasskeysParams = z.object({ user_id: UserIdParam });
export const UserPasskeyParams = z.object({ user_id: UserIdParam, id: z.string().max(64) });

/** A passkey as its owner sees it: never the public key or the credential id. */
export const PasskeyOut = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: z.string().describe('ISO 8601'),
  lastUsedAt: z.string().nullable().describe('ISO 8601'),
  transports: z.array(z.string()),
});

export const PasskeyListOut = z.array(PasskeyOut);

const CredentialDescriptor = z.object({
  id: z.string(),
  type: z.literal('public-key'),
  transports: z.array(z.string()).optional(),
});

/** The members both option dictionaries share (WebAuthn Level 3 §5.4 and §5.5). */
const CommonOptions = {
  challenge: z.string(),
  timeout: z.number().optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
  hints: z.array(z.string()).optional(),
};

/** `PublicKeyCredentialCreationOptionsJSON`. */
export const CreationOptionsOut = z
  .object({
    ...CommonOptions,
    rp: z.object({ id: z.string().optional(), name: z.string() }),
    user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
    pubKeyCredParams: z.array(z.object({ type: z.literal('public-key'), alg: z.number() })),
    excludeCredentials: z.array(CredentialDescriptor).optional(),
    authenticatorSelection: z
      .object({
        residentKey: z.string().optional(),
        requireResidentKey: z.boolean().optional(),
        userVerification: z.string().optional(),
        authenticatorAttachment: z.string().optional(),
      })
      .optional(),
    attestation: z.string().optional(),
  })
  .describe(
    'PublicKeyCredentialCreationOptionsJSON: give it to PublicKeyCredential.parseCreationOptionsFromJSON',
  );

/** `PublicKeyCredentialRequestOptionsJSON`. */
export const RequestOptionsOut = z
  .object({
    ...CommonOptions,
    rpId: z.string().optional(),
    allowCredentials: z.array(CredentialDescriptor).optional(),
    userVerification: z.string().optional(),
  })
  .describe(
    'PublicKeyCredentialRequestOptionsJSON: give it to PublicKeyCredential.parseRequestOptionsFromJSON',
  );

/** `POST /auth/passkey/options`: without a username, options for a discoverable credential. */
export const LoginOptionsBody = z.object({ username: z.string().max(150).optional() });

export const LoginOptionsOut = z.object({ challengeId: z.string(), options: RequestOptionsOut });

/** `POST /auth/passkey/token`. */
export const PasskeyTokenBody = z.object({
  challengeId: z.string().max(64),
  response: AuthenticationResponse,
});

/** `POST /mfa/webauthn/options` (snake_case as SPEC "Multi-factor routes"). */
export const MfaOptionsBody = z.object({ mfa_token: z.string().min(1).max(4096) });

export const TokenPairOut = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  refresh_token: z.string(),
});

export type RegistrationResponseJson = z.infer<typeof RegistrationResponse>;
export type AuthenticationResponseJson = z.infer<typeof AuthenticationResponse>;
