import type { JWTPayload } from 'jose';
import { isU64 } from '../ids/u64.js';

/**
 * The verified caller. A token without a usable user id is a service caller (`userId: null`): it
 * acts only within its scopes and always names the user it acts for.
 */
export interface Viewer {
  userId: string | null;
  scopes: ReadonlySet<string>;
  /** The token's `sub` as given: names a service principal (a feed reader, a purge processor). */
  subject: string | null;
}

export interface ClaimMapping {
  /** The claim holding the caller's UInt64 user id (`sub` by default; namespaced names allowed). */
  userIdClaim: string;
  /** The one claim holding scopes; undefined: `scope`, `scp` and `permissions` together. */
  scopesClaim: string | undefined;
}

/** A signed token whose claims cannot be used as they are; the message names the claim. */
export class ClaimError extends Error {
  override name = 'ClaimError';
}

/** RFC 9068's `scope`; Okta's `scp` (Azure AD: a string); Auth0 RBAC's `permissions`. */
const DEFAULT_SCOPE_CLAIMS = ['scope', 'scp', 'permissions'];

export function viewerFromClaims(payload: JWTPayload, mapping: ClaimMapping): Viewer {
  const scopeClaims = mapping.scopesClaim === undefined ? DEFAULT_SCOPE_CLAIMS : [mapping.scopesClaim];
  return {
    userId: userIdFrom(payload, mapping.userIdClaim),
    scopes: new Set(scopeClaims.flatMap((claim) => scopesFrom(payload, claim))),
    subject: typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : null,
  };
}

/**
 * A UInt64 as a canonical decimal string, or a JSON integer from 0 to 2^53 − 1 (larger numbers
 * have already lost digits when the JSON was parsed). Absent: no user id. Identity providers put
 * their own ids in `sub` (`auth0|…`, UUIDs, client ids), so there any other value also means "no
 * user id"; a dedicated claim exists only to carry ours, so a bad value there refuses the token.
 */
function userIdFrom(payload: JWTPayload, claim: string): string | null {
  const value = payload[claim];
  if (value === undefined) return null;
  if (typeof value === 'string' && isU64(value)) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (claim === 'sub') return null;
  throw new ClaimError(`the token's "${claim}" claim must be a UInt64 user id (a decimal string, or a JSON integer up to 2^53 - 1)`);
}

/** A space-separated string or an array of strings; anything else refuses the token. */
function scopesFrom(payload: JWTPayload, claim: string): string[] {
  const value = payload[claim];
  if (value === undefined) return [];
  if (typeof value === 'string') return value.split(' ').filter(Boolean);
  if (Array.isArray(value) && value.every((scope) => typeof scope === 'string')) return value.filter(Boolean);
  throw new ClaimError(`the token's "${claim}" claim must be a space-separated string or an array of strings`);
}
