import { createHmac, createPublicKey } from 'node:crypto';
import { SignJWT } from 'jose';
import type { SigningKey } from './identity-provider-configuration.js';

/** Tokens taken apart, and made by hand the way an attacker or a broken issuer would. */

/** A JWT's payload, unverified. */
export function decode(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
}

/** Signed with `signer`'s private half, as the provider would sign, but with `alg` and the expiry as asked. */
export function handSigned(
  signer: SigningKey,
  payload: Record<string, unknown>,
  alg: string = signer.alg,
  expires = true,
): Promise<string> {
  const jwt = new SignJWT(payload).setProtectedHeader({ alg, kid: signer.kid, typ: 'at+jwt' }).setIssuedAt();
  return (expires ? jwt.setExpirationTime('5m') : jwt).sign(signer.privateKey);
}

/** A public key's bytes as an HMAC secret: the JWK as served, its PEM, its modulus. */
export function publicKeySecrets(jwk: Record<string, string>): string[] {
  const pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
  return [JSON.stringify(jwk), pem, Buffer.from(jwk['n']!, 'base64url').toString('latin1')];
}

/** Signed HS256 with `secret`, naming the key `kid`. */
export function hs256Signed(secret: string, kid: string, payload: Record<string, unknown>): string {
  const input = `${base64url({ alg: 'HS256', kid, typ: 'JWT' })}.${base64url(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
