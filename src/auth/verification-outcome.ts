import { errors } from 'jose';
import { ClaimError } from './claims.js';
import { KeysUnavailableError } from './remote-key-set.js';

/** How one `Authorization` header fared; the label of `community_auth_verifications_total`. */
export type VerificationOutcome =
  | 'verified'
  | 'cached'
  | 'no_token'
  | 'malformed'
  | 'expired'
  | 'bad_signature'
  | 'algorithm_refused'
  | 'claims_refused'
  | 'unknown_key'
  | 'keys_unavailable';

/** The outcome and the message the caller gets (never key material, never a stack). */
export function refusal(error: unknown): { outcome: VerificationOutcome; problem: string } {
  if (error instanceof KeysUnavailableError) return { outcome: 'keys_unavailable', problem: error.message };
  if (error instanceof ClaimError) return { outcome: 'claims_refused', problem: error.message };
  if (error instanceof errors.JWTExpired) return { outcome: 'expired', problem: 'the token has expired' };
  if (error instanceof errors.JWTClaimValidationFailed) {
    return {
      outcome: 'claims_refused',
      problem:
        error.claim === 'exp' && error.reason === 'missing'
          ? 'the token has no expiry (exp claim)'
          : `the token's ${error.claim} claim is not accepted`,
    };
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return { outcome: 'algorithm_refused', problem: 'the token is not signed with an accepted algorithm' };
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return { outcome: 'bad_signature', problem: 'the token signature is invalid' };
  if (error instanceof errors.JWKSNoMatchingKey) {
    return { outcome: 'unknown_key', problem: "no key of the identity provider matches the token's kid and alg" };
  }
  if (error instanceof errors.JWKSMultipleMatchingKeys) {
    return { outcome: 'unknown_key', problem: 'the token names no key (kid) and several keys could have signed it' };
  }
  return { outcome: 'malformed', problem: 'the token is malformed' };
}
