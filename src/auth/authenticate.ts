import { createPublicKey, type KeyObject, webcrypto } from 'node:crypto';
import { errors, jwtVerify } from 'jose';
import type { VerificationKeyConfig } from '../config/config.js';
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

export type Authentication =
  | { viewer: Viewer; problem: null; expiresAt?: number }
  | { viewer: null; problem: string; expiresAt?: undefined };

export interface VerificationKey {
  key: KeyObject | webcrypto.CryptoKey;
  algorithm: 'HS256' | 'RS256' | 'ES256';
  issuer: string | undefined;
  audience: string | undefined;
}

const CLOCK_TOLERANCE_SECONDS = 30;
const ANONYMOUS: Authentication = { viewer: null, problem: 'no bearer token' };


/**
 * Imported once (jose would otherwise convert the key on every verification). A bad public key
 * throws here, synchronously, so the app refuses to start.
 */
function verificationKey(key: VerificationKeyConfig, claims: { issuer: string | undefined; audience: string | undefined }): Promise<VerificationKey> {
  if (key.kind === 'secret') {
    return webcrypto.subtle
      .importKey('raw', Buffer.from(key.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
      .then((hmac) => ({ key: hmac, algorithm: 'HS256', ...claims }));
  }
  const publicKey = createPublicKey(key.pem);
  if (publicKey.asymmetricKeyType === 'rsa') return Promise.resolve({ key: publicKey, algorithm: 'RS256', ...claims });
  if (publicKey.asymmetricKeyType === 'ec' && publicKey.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return Promise.resolve({ key: publicKey, algorithm: 'ES256', ...claims });
  }
  throw new Error('AUTH_JWT_PUBLIC_KEY must be an RSA key (RS256) or an EC P-256 key (ES256)');
}

const CACHE_ENTRIES = 10_000;
const CACHE_SECONDS = 60;

/**
 * Remembers verified tokens (keyed by the whole token, signature included) for up to a minute and
 * never past their expiry: clients reuse a token for many requests, and verifying a signature costs
 * more than the rest of a small request.
 */
export class Authenticator {
  private readonly verified = new Map<string, { viewer: Viewer; until: number; expiresAt: number | undefined }>();
  private readonly verification: Promise<VerificationKey>;

  constructor(key: VerificationKeyConfig, claims: { issuer: string | undefined; audience: string | undefined }) {
    this.verification = verificationKey(key, claims);
  }

  async authenticate(authorization: string | null): Promise<Authentication> {
    const cached = authorization === null ? undefined : this.verified.get(authorization);
    if (cached && cached.until > Date.now()) {
      return { viewer: cached.viewer, problem: null, ...(cached.expiresAt === undefined ? {} : { expiresAt: cached.expiresAt }) };
    }
    const result = await authenticate(authorization, await this.verification);
    if (result.viewer && authorization !== null) this.remember(authorization, result.viewer, result.expiresAt);
    return result;
  }

  private remember(authorization: string, viewer: Viewer, expiresAt: number | undefined): void {
    if (this.verified.size >= CACHE_ENTRIES) this.verified.delete(this.verified.keys().next().value!);
    const until = Math.min(Date.now() + CACHE_SECONDS * 1000, expiresAt === undefined ? Infinity : expiresAt * 1000);
    this.verified.set(authorization, { viewer, until, expiresAt });
  }
}

/**
 * Verifies `Authorization: Bearer <jwt>` with exactly the configured algorithm (so `alg: none`
 * and algorithm confusion are refused), exp/nbf with a small tolerance, and iss/aud when set.
 */
async function authenticate(authorization: string | null, verification: VerificationKey): Promise<Authentication> {
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
    return {
      viewer: { userId: payload.sub, scopes: new Set(scope.split(' ').filter(Boolean)) },
      problem: null,
      ...(payload.exp === undefined ? {} : { expiresAt: payload.exp }),
    };
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
