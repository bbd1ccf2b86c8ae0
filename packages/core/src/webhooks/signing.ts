import { createHmac, randomBytes } from 'node:crypto';
import { SECRET_BYTES, SECRET_PREFIX } from './constants.js';

/** A new endpoint secret (SPEC-3 §3): `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/**
 * One Standard Webhooks signature (https://www.standardwebhooks.com, "Signature scheme"): `v1,` + base64 of
 * HMAC-SHA256 keyed with the secret's decoded bytes over `{webhook-id}.{webhook-timestamp}.{body}`.
 */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/**
 * The `webhook-signature` header: one signature per secret, space-separated, the current secret's first and
 * the previous one's second during a rotation's overlap (SPEC-3 §3).
 */
export function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => signature(secret, id, timestamp, body)).join(' ');
}
