// @svc/client: the browser and Node client of an svc server (docs/client.md).
export { createClient } from './client.js';
export type {
  ClientOptions,
  LoginResult,
  MfaStep,
  SignedIn,
  SvcClient,
  SvcPasskey,
  SvcUser,
} from './client.js';
export { SvcApiError } from './errors.js';
export type { ClientErrorCode, SvcErrorItem } from './errors.js';
export { SVC_ERROR_CODES, type SvcErrorCode } from './codes.js';
export type { EventsOptions, EventsStatus, EventsSubscription, SvcEvent } from './events.js';
export type { SignedOutReason } from './refresh.js';
export {
  localTokenStorage,
  memoryStorage,
  sessionTokenStorage,
  type TokenPair,
  type TokenStorage,
} from './storage.js';
export type { WebSocketConstructor, WebSocketLike } from './platform.js';
export type { components, paths } from './schema.js';
// SPEC-3 §2 organizations
export type {
  SvcFetchInit,
  SvcOrganization,
  SvcOrganizationDetail,
  SvcOrganizationHandle,
  SvcOrganizationInvitation,
  SvcOrganizationMember,
  SvcOrganizationMembership,
  SvcPage,
} from './client.js';
// SPEC-3 section 1: social login
export type { OAuthProvider, SignInFragment, SvcIdentity } from './social.js';
