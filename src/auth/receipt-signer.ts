import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { ReceiptSigningJwk } from '../config/groups/downstream.js';

/** The `typ` of every receipt: verifiers should require it, so no other token of ours passes for one. */
export const RECEIPT_TYPE = 'community-receipt+jwt';
export const RECEIPT_ISSUER = 'community-layer';
/** The `typ` of a user export's closing seal (src/export). */
export const EXPORT_TYPE = 'community-export+jwt';

function algorithmOf(jwk: JWK): string {
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256';
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  if (jwk.kty === 'RSA') return 'RS256';
  throw new Error(`RECEIPT_SIGNING_KEY: unsupported key (kty ${jwk.kty}, crv ${String(jwk.crv)})`);
}

/** The public half of a private JWK: drop every private member. */
function publicHalf({ d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, ...rest }: JWK): JWK {
  return rest;
}

/**
 * Signs leave and purge receipts as compact JWS (a JWT, `typ` community-receipt+jwt) with one key,
 * whose public half is served as a JWKS: anyone can verify a receipt with any JOSE library, without
 * our database. `null` key: receipts are not signed (production without RECEIPT_SIGNING_KEY).
 */
interface SigningKey {
  privateKey: CryptoKey | Uint8Array;
  publicJwk: JWK;
  alg: string;
  kid: string;
}

async function signingKey(jwk: ReceiptSigningJwk): Promise<SigningKey> {
  const alg = algorithmOf(jwk as JWK);
  const publicJwk = publicHalf(jwk as JWK);
  const kid = jwk.kid ?? (await calculateJwkThumbprint(publicJwk));
  const privateKey = await importJWK({ ...(jwk as JWK), alg }, alg);
  return { privateKey, publicJwk: { ...publicJwk, kid, alg, use: 'sig' }, alg, kid };
}

/**
 * Signs leave and purge receipts as compact JWS (a JWT, `typ` community-receipt+jwt) with one key,
 * whose public half is served as a JWKS: anyone can verify a receipt with any JOSE library, without
 * our database. Key: the configured one; none configured, a fresh one per process outside
 * production, and no signing at all in production (receipts then carry no token).
 */
export class ReceiptSigner {
  private readonly key: Promise<SigningKey | null>;

  constructor(configured: ReceiptSigningJwk | null, production: boolean) {
    this.key = configured
      ? signingKey(configured)
      : production
        ? Promise.resolve(null)
        : generateReceiptJwk().then((jwk) => signingKey(jwk as ReceiptSigningJwk));
    // A broken key fails `ready()` (the start), not as an unhandled rejection.
    this.key.catch(() => undefined);
  }

  /** Rejects when the configured key cannot be used. */
  async ready(): Promise<void> {
    await this.key;
  }

  /** The JWKS served at /.well-known/community-receipts.json. */
  async jwks(): Promise<{ keys: JWK[] }> {
    const key = await this.key;
    return { keys: key ? [key.publicJwk] : [] };
  }

  /** A receipt over `claims`, identified by `receiptId` (jti) and about `userId` (sub); null when unsigned. */
  sign(receiptId: string, userId: string, claims: JWTPayload): Promise<string | null> {
    return this.signAs(RECEIPT_TYPE, receiptId, userId, claims);
  }

  /** The same signature under another `typ` (an export's seal: EXPORT_TYPE), so one kind never passes for the other. */
  async signAs(typ: string, id: string, userId: string, claims: JWTPayload): Promise<string | null> {
    const key = await this.key;
    if (!key) return null;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ })
      .setIssuer(RECEIPT_ISSUER)
      .setSubject(userId)
      .setJti(id)
      .setIssuedAt()
      .sign(key.privateKey);
  }
}

/** A new private P-256 JWK (what `RECEIPT_SIGNING_KEY` holds), with its thumbprint as kid. */
export async function generateReceiptJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: await calculateJwkThumbprint(publicHalf(jwk)) };
}
