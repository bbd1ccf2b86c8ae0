import { createHash, randomBytes } from 'node:crypto';
import type { Cache, CacheWriteOptions } from '../kernel/cache/cache.js';
import { EXCHANGE_CODE_TTL_SECONDS, STATE_TTL_SECONDS } from './constants.js';

/** A flow between the authorize (or link) answer and the callback (SPEC-3 section 1). */
export interface PendingFlow {
  provider: string;
  purpose: 'login' | 'link';
  /** For a link: the user it is bound to. */
  userId: string | null;
  redirectTo: string;
  codeVerifier: string;
  /** OpenID providers: the `nonce` the ID token must carry. */
  nonce: string | null;
  /** Digest of the binding cookie of the browser that started the flow. */
  browser: string;
}

/** What a login's `#svc_code` stands for until the exchange. */
export interface PendingLogin {
  userId: string;
  identityId: string;
  provider: string;
  issuer: string;
  subject: string;
}

// SPEC-3 §7 rule 6: a state is created by anonymous requests (bounded, never evicting security state); a code
// stands for a completed callback.
const ANONYMOUS: CacheWriteOptions = { keep: 'anonymous' };
const SECURITY: CacheWriteOptions = { keep: 'security' };

/** A random value for a URL or a cookie: 32 bytes, base64url. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/**
 * States and exchange codes in the shared cache, stored under their digests (SPEC-3 section 1): `take` reads and
 * deletes in one atomic step (a Redis GETDEL across hosts), so a state or a code works once, whatever the instance
 * and however many presentations arrive together.
 */
export function createFlowStore(cache: Cache) {
  const stateKey = (state: string) => `oauth:state:${digest(state)}`;
  const codeKey = (code: string) => `oauth:code:${digest(code)}`;
  return {
    async putState(state: string, flow: PendingFlow): Promise<void> {
      await cache.set(stateKey(state), flow, STATE_TTL_SECONDS, ANONYMOUS);
    },
    takeState: (state: string) => cache.take<PendingFlow>(stateKey(state)),
    async putCode(login: PendingLogin): Promise<string> {
      const code = randomToken();
      await cache.set(codeKey(code), login, EXCHANGE_CODE_TTL_SECONDS, SECURITY);
      return code;
    },
    takeCode: (code: string) => cache.take<PendingLogin>(codeKey(code)),
  };
}

export type FlowStore = ReturnType<typeof createFlowStore>;
