import { createPublicKey, type KeyObject, webcrypto } from 'node:crypto';
import type { JWTVerifyGetKey } from 'jose';

/** What token signatures are checked against: a configured key, or an identity provider's key set. */
export interface KeySource {
  /** The only algorithms accepted (never `none`, never HS* with a public key). */
  readonly algorithms: readonly string[];
  readonly getKey: JWTVerifyGetKey;
  /** Changes whenever the keys change, so verifications remembered under removed keys end. */
  readonly generation: number;
  /** False while a remote key set has never been loaded (readiness). */
  readonly loaded: boolean;
  start(): void;
  stop(): void;
}

export type StaticKey = { kind: 'secret'; secret: string } | { kind: 'publicKey'; pem: string };

/**
 * One configured key, imported once (jose would otherwise convert it on every verification). A
 * bad public key throws here, synchronously, so the app refuses to start.
 */
export function staticKeySource(key: StaticKey): KeySource {
  const { algorithm, imported } = importStaticKey(key);
  return {
    algorithms: [algorithm],
    getKey: () => imported,
    generation: 0,
    loaded: true,
    start: () => undefined,
    stop: () => undefined,
  };
}

function importStaticKey(key: StaticKey): { algorithm: string; imported: Promise<KeyObject | webcrypto.CryptoKey> } {
  if (key.kind === 'secret') {
    const hmac = { name: 'HMAC', hash: 'SHA-256' };
    return { algorithm: 'HS256', imported: webcrypto.subtle.importKey('raw', Buffer.from(key.secret), hmac, false, ['verify']) };
  }
  const publicKey = createPublicKey(key.pem);
  if (publicKey.asymmetricKeyType === 'rsa') return { algorithm: 'RS256', imported: Promise.resolve(publicKey) };
  if (publicKey.asymmetricKeyType === 'ec' && publicKey.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return { algorithm: 'ES256', imported: Promise.resolve(publicKey) };
  }
  throw new Error('AUTH_JWT_PUBLIC_KEY must be an RSA key (RS256) or an EC P-256 key (ES256)');
}
