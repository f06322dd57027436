import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SignJWT } from 'jose';
import type { AuthConfig, AuthKeyConfig } from '../config/config.js';
import type { ReceiptSigningJwk } from '../config/groups/downstream.js';
import { generateReceiptJwk } from './receipt-signer.js';

export interface TokenClaims {
  sub: string;
  scope?: string;
  /** e.g. "12h"; default 12 hours. */
  expiresIn?: string;
  issuer?: string;
  audience?: string;
}

/** Mints an HS256 token (development and tests; production tokens come from the identity provider). */
export function mintToken(secret: string, claims: TokenClaims): Promise<string> {
  let jwt = new SignJWT(claims.scope ? { scope: claims.scope } : {})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(claims.expiresIn ?? '12h');
  if (claims.issuer) jwt = jwt.setIssuer(claims.issuer);
  if (claims.audience) jwt = jwt.setAudience(claims.audience);
  return jwt.sign(Buffer.from(secret));
}

/**
 * Without a configured key outside production, a random secret kept next to the embedded data
 * (`.data/dev-jwt-secret`), so restarts and `npm run token` agree on it.
 */
export async function resolveAuthKey(
  auth: AuthConfig,
  dataDir: string,
): Promise<{ kind: 'secret'; secret: string; generated: boolean } | Exclude<AuthKeyConfig, { kind: 'secret' | 'development' }>> {
  if (auth.key.kind === 'secret') return { ...auth.key, generated: false };
  if (auth.key.kind !== 'development') return auth.key;
  const file = path.join(path.dirname(path.resolve(dataDir)), 'dev-jwt-secret');
  if (existsSync(file)) return { kind: 'secret', secret: (await readFile(file, 'utf8')).trim(), generated: true };
  const secret = randomBytes(32).toString('base64url');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return { kind: 'secret', secret, generated: true };
}

/**
 * The receipt signing key: the configured one, else outside production a P-256 key generated once
 * and kept next to the embedded data (`.data/dev-receipt-key.json`), so restarts sign alike.
 * Production without RECEIPT_SIGNING_KEY signs no receipts (null).
 */
export async function resolveReceiptKey(
  configured: ReceiptSigningJwk | undefined,
  production: boolean,
  dataDir: string,
): Promise<ReceiptSigningJwk | null> {
  if (configured) return configured;
  if (production) return null;
  const file = path.join(path.dirname(path.resolve(dataDir)), 'dev-receipt-key.json');
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as ReceiptSigningJwk;
  const jwk = await generateReceiptJwk();
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(jwk)}\n`, { mode: 0o600 });
  return jwk as ReceiptSigningJwk;
}
