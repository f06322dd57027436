import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { errors, jwtVerify } from 'jose';
import { isU64 } from '../ids/u64.js';

export const SCOPES = {
  /** Act on any user's membership and read the contributions ledger. */
  admin: 'community:admin',
  /** Send signals on behalf of any user (back-end services). */
  signalWriter: 'signals:write',
} as const;

export interface Viewer {
  /** The token's `sub`: a UInt64 user id. */
  userId: string;
  scopes: ReadonlySet<string>;
}

export type Authentication = { viewer: Viewer; problem: null } | { viewer: null; problem: string };

export interface VerificationKey {
  key: KeyObject;
  algorithm: 'HS256' | 'RS256' | 'ES256';
  issuer: string | undefined;
  audience: string | undefined;
}

const CLOCK_TOLERANCE_SECONDS = 30;
const ANONYMOUS: Authentication = { viewer: null, problem: 'no bearer token' };

export function verificationKey(
  key: { kind: 'secret'; secret: string } | { kind: 'publicKey'; pem: string },
  claims: { issuer: string | undefined; audience: string | undefined },
): VerificationKey {
  if (key.kind === 'secret') return { key: createSecretKey(Buffer.from(key.secret)), algorithm: 'HS256', ...claims };
  const publicKey = createPublicKey(key.pem);
  if (publicKey.asymmetricKeyType === 'rsa') return { key: publicKey, algorithm: 'RS256', ...claims };
  if (publicKey.asymmetricKeyType === 'ec' && publicKey.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return { key: publicKey, algorithm: 'ES256', ...claims };
  }
  throw new Error('AUTH_JWT_PUBLIC_KEY must be an RSA key (RS256) or an EC P-256 key (ES256)');
}

/**
 * Verifies `Authorization: Bearer <jwt>` with exactly the configured algorithm (so `alg: none`
 * and algorithm confusion are refused), exp/nbf with a small tolerance, and iss/aud when set.
 */
export async function authenticate(authorization: string | null, verification: VerificationKey): Promise<Authentication> {
  if (authorization === null) return ANONYMOUS;
  const match = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/.exec(authorization.trim());
  if (!match) return { viewer: null, problem: 'the Authorization header must be "Bearer <JWT>"' };
  try {
    const { payload } = await jwtVerify(match[1]!, verification.key, {
      algorithms: [verification.algorithm],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['sub'],
      ...(verification.issuer ? { issuer: verification.issuer } : {}),
      ...(verification.audience ? { audience: verification.audience } : {}),
    });
    if (typeof payload.sub !== 'string' || !isU64(payload.sub)) {
      return { viewer: null, problem: 'the token subject must be a UInt64 user id' };
    }
    const scope = typeof payload['scope'] === 'string' ? payload['scope'] : '';
    return { viewer: { userId: payload.sub, scopes: new Set(scope.split(' ').filter(Boolean)) }, problem: null };
  } catch (error) {
    return { viewer: null, problem: describe(error) };
  }
}

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `the token's ${error.claim} claim is not accepted`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'the token is not signed with the accepted algorithm';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the token signature is invalid';
  return 'the token is malformed';
}
