/**
 * OpenID Connect Discovery: the issuer's `jwks_uri`. The document must name exactly the configured
 * issuer (OpenID Connect Discovery 1.0, section 4.3), and an https issuer never points at an http
 * key set.
 */
export async function discoverJwksUri(issuer: string, timeoutMs: number): Promise<URL> {
  const location = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  const response = await fetch(location, {
    headers: { accept: 'application/json' },
    redirect: 'error',
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (response.status !== 200) throw new Error(`${location} answered HTTP ${response.status}`);
  const document = (await response.json().catch(() => null)) as { issuer?: unknown; jwks_uri?: unknown } | null;
  if (document?.issuer !== issuer) {
    throw new Error(`${location} names the issuer ${JSON.stringify(document?.issuer)}, not AUTH_OIDC_ISSUER ${JSON.stringify(issuer)}`);
  }
  const jwksUri = typeof document.jwks_uri === 'string' ? URL.parse(document.jwks_uri) : null;
  if (!jwksUri || !/^https?:$/.test(jwksUri.protocol)) throw new Error(`${location} has no usable jwks_uri`);
  if (issuer.startsWith('https:') && jwksUri.protocol !== 'https:') throw new Error(`${location} points at an http jwks_uri`);
  return jwksUri;
}
