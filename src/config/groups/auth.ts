import { z } from 'zod';
import { brokenRule, count, flag, group, httpUrl, milliseconds, optional, setting, variableOf } from '../setting.js';

/** A key bearer tokens can be verified with: a static one, or a remote key set (`jwks`), or the key set
 * named by the issuer's discovery document (`oidc`). */
export type VerificationKeyConfig =
  | { kind: 'secret'; secret: string }
  | { kind: 'publicKey'; pem: string }
  | { kind: 'jwks'; url: string }
  | { kind: 'oidc'; issuer: string };

/** How bearer tokens are verified. `development`: main generates and persists a local secret. */
export type AuthKeyConfig = VerificationKeyConfig | { kind: 'development' };

/** A JWT claim name: any non-empty string, namespaced URLs included (no path syntax). */
const claimName = () => z.string().min(1).max(256);

/** Fetching a remote key set (`AUTH_JWKS_URL`, `AUTH_OIDC_ISSUER`). */
export const jwks = group(
  {
    cooldownMs: setting(
      'AUTH_JWKS_COOLDOWN_MS',
      count(1, 3_600_000).default(30_000),
      'least time between key set fetches (unknown `kid`, retries, short max-age)',
    ),
    maxAgeMs: setting(
      'AUTH_JWKS_MAX_AGE_MS',
      count(1_000, 86_400_000).default(600_000),
      'longest use of a fetched key set (also without Cache-Control)',
    ),
    timeoutMs: setting('AUTH_JWKS_TIMEOUT_MS', milliseconds.default(5_000), 'timeout of a discovery or key set fetch'),
  },
  (settings) =>
    settings.superRefine((jwks, ctx) => {
      if (jwks.cooldownMs > jwks.maxAgeMs)
        ctx.addIssue({ code: 'custom', path: ['cooldownMs'], message: 'must not exceed AUTH_JWKS_MAX_AGE_MS' });
    }),
);

const keySources = {
  secret: setting(
    'AUTH_JWT_SECRET',
    optional(z.string().refine((value) => Buffer.byteLength(value) >= 32, 'must be at least 32 bytes')),
    'key source: HS256 secret, at least 32 bytes',
  ),
  publicKey: setting(
    'AUTH_JWT_PUBLIC_KEY',
    optional(
      z
        .string()
        .includes('-----BEGIN PUBLIC KEY-----', { message: 'must be a PEM public key (SPKI)' })
        .transform((pem) => pem.replace(/\\n/g, '\n')),
    ),
    'key source: PEM public key (RSA → RS256, P-256 → ES256); `\\n` escapes allowed',
  ),
  jwksUrl: setting('AUTH_JWKS_URL', optional(httpUrl), 'key source: a JSON Web Key Set URL (RS256, PS256, ES256, EdDSA)'),
  oidcIssuer: setting(
    'AUTH_OIDC_ISSUER',
    optional(httpUrl),
    'key source: an OpenID issuer; its discovery document names the key set, and `iss` must equal it',
  ),
};
const KEY_VARIABLES = Object.values(keySources).map(variableOf);

export const auth = group(
  {
    ...keySources,
    issuer: setting(
      'AUTH_JWT_ISSUER',
      optional(z.string().min(1)),
      'required `iss`; required in production with `AUTH_JWKS_URL`',
      '(unset; `AUTH_OIDC_ISSUER` if set)',
    ),
    audience: setting(
      'AUTH_JWT_AUDIENCE',
      optional(z.string().min(1)),
      'required audience, read from `AUTH_AUDIENCE_CLAIM`; required in production with a remote key set',
    ),
    audienceClaim: setting(
      'AUTH_AUDIENCE_CLAIM',
      claimName().default('aud'),
      'the claim holding the audience (Cognito access tokens: `client_id`)',
    ),
    userIdClaim: setting(
      'AUTH_USER_ID_CLAIM',
      claimName().default('sub'),
      "the claim holding the caller's UInt64 user id (namespaced names allowed)",
    ),
    scopesClaim: setting(
      'AUTH_SCOPES_CLAIM',
      optional(claimName()),
      'the one claim holding scopes (a space-separated string or an array)',
      '(unset: `scope`, `scp` and `permissions`)',
    ),
    allowNoExp: setting('AUTH_ALLOW_NO_EXP', flag.default(false), '`true`: accept tokens without `exp`'),
    maxLifetimeMs: setting(
      'AUTH_TOKEN_MAX_LIFETIME_MS',
      count(60_000, 366 * 86_400_000).default(86_400_000),
      'longest token lifetime: `exp` further than this from `iat`, or from now, is refused',
    ),
    jwks: jwks.schema,
  },
  (settings) =>
    settings
      .superRefine((auth, ctx) => {
        const keys = (Object.keys(keySources) as (keyof typeof keySources)[]).filter((key) => auth[key] !== undefined);
        if (keys.length > 1)
          brokenRule(
            ctx,
            keys.map((key) => variableOf(keySources[key])),
            'set exactly one of them',
          );
        if (auth.oidcIssuer && auth.issuer && auth.oidcIssuer !== auth.issuer) {
          ctx.addIssue({
            code: 'custom',
            path: ['issuer'],
            message: 'must be unset or equal AUTH_OIDC_ISSUER (tokens must come from the discovered issuer)',
          });
        }
      })
      .transform(({ secret, publicKey, jwksUrl, oidcIssuer, issuer, ...verification }) => {
        const key: AuthKeyConfig = secret
          ? { kind: 'secret', secret }
          : publicKey
            ? { kind: 'publicKey', pem: publicKey }
            : jwksUrl
              ? { kind: 'jwks', url: jwksUrl }
              : oidcIssuer
                ? { kind: 'oidc', issuer: oidcIssuer }
                : { kind: 'development' };
        // With `oidc` the issuer is always the discovered one.
        return { key, issuer: oidcIssuer ?? issuer, ...verification };
      }),
);

export type AuthConfig<Key extends AuthKeyConfig = AuthKeyConfig> = Omit<z.output<typeof auth.schema>, 'key'> & { key: Key };
export type RemoteKeySetConfig = z.output<typeof jwks.schema>;

export function authInProduction(auth: AuthConfig, ctx: z.RefinementCtx): void {
  if (auth.key.kind === 'development') {
    brokenRule(ctx, KEY_VARIABLES, 'one is required in production (tokens cannot be verified without a key)');
    return;
  }
  const remote =
    auth.key.kind === 'jwks'
      ? { variable: variableOf(keySources.jwksUrl), url: auth.key.url }
      : auth.key.kind === 'oidc'
        ? { variable: variableOf(keySources.oidcIssuer), url: auth.key.issuer }
        : null;
  if (!remote) return;
  // A provider signs tokens for every API and app it serves: without iss and aud, any of them would do.
  const missing = [
    ...(auth.key.kind === 'jwks' && !auth.issuer ? ['AUTH_JWT_ISSUER'] : []),
    ...(!auth.audience ? ['AUTH_JWT_AUDIENCE'] : []),
  ];
  if (missing.length > 0) {
    brokenRule(
      ctx,
      missing,
      `required in production with ${remote.variable} (otherwise tokens the provider issues for other APIs would be accepted)`,
    );
  } else if (!remote.url.startsWith('https:')) {
    brokenRule(ctx, [remote.variable], 'must be an https URL in production');
  }
}
