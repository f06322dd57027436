import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { Configuration, JWK } from 'oidc-provider';

/**
 * How the test identity provider (identity-provider.ts) is set up: its clients, resource servers,
 * claims and token formats, and the signing keys it serves.
 */

export const AUDIENCE = 'community-layer';
export const USER_ID_CLAIM = 'https://community.example/user_id';
export const API_SCOPES = 'community:admin signals:write';

/** Resource indicators (RFC 8707) the provider knows: our API, a short-lived variant, another API. */
export const RESOURCES = {
  api: 'https://community.example/graphql',
  shortLived: 'https://community.example/graphql/short-lived',
  otherApi: 'https://billing.example/api',
} as const;
export const SHORT_LIVED_SECONDS = 5;

const RESOURCE_SERVERS: Record<string, { audience: string; ttlSeconds: number }> = {
  [RESOURCES.api]: { audience: AUDIENCE, ttlSeconds: 600 },
  [RESOURCES.shortLived]: { audience: AUDIENCE, ttlSeconds: SHORT_LIVED_SECONDS },
  [RESOURCES.otherApi]: { audience: 'billing-api', ttlSeconds: 600 },
};

/** Where each client-credentials client's scopes go in its tokens. */
export const SCOPE_CLAIM_OF_CLIENT: Record<string, 'scope' | 'scp' | 'permissions'> = {
  backend: 'scope',
  'okta-style-backend': 'scp',
  'auth0-style-backend': 'permissions',
};
export const WEB_CLIENT = 'settings-web';
export const REDIRECT_URI = 'http://127.0.0.1/callback';

export interface SigningKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: KeyObject;
  /** What the provider serves in its JWKS for this key. */
  publicJwk: JWK;
}

export function signingKey(kid: string, alg: SigningKey['alg'] = 'RS256'): SigningKey {
  const { privateKey, publicKey } =
    alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { kid, alg, privateKey, publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' } as JWK };
}

/** The provider's configuration: these keys sign, these accounts carry these app user ids. */
export function providerConfiguration(keys: SigningKey[], accounts: Record<string, string | number | undefined>): Configuration {
  return {
    jwks: { keys: keys.map(privateJwk) },
    clients: [
      {
        client_id: WEB_CLIENT,
        client_secret: clientSecret(WEB_CLIENT),
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [REDIRECT_URI],
      },
      ...Object.keys(SCOPE_CLAIM_OF_CLIENT).map((clientId) => ({
        client_id: clientId,
        client_secret: clientSecret(clientId),
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      })),
    ],
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCES.api,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          const server = RESOURCE_SERVERS[indicator];
          if (!server) throw new Error(`unknown resource ${indicator}`);
          return {
            scope: API_SCOPES,
            audience: server.audience,
            accessTokenTTL: server.ttlSeconds,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: keys[0]!.alg } },
          };
        },
      },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: {
      Interaction: 600,
      Session: 600,
      Grant: 600,
      AuthorizationCode: 60,
      IdToken: 600,
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 600,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 600,
    },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    extraTokenClaims: (_ctx, token) => {
      const accountId = 'accountId' in token ? token.accountId : undefined;
      const userId = accountId === undefined ? undefined : accounts[accountId];
      return userId === undefined ? undefined : { [USER_ID_CLAIM]: userId };
    },
    formats: {
      customizers: {
        jwt: (_ctx, token, jwt) => {
          const claim = SCOPE_CLAIM_OF_CLIENT[token.clientId ?? ''];
          if (claim === undefined || claim === 'scope' || typeof jwt.payload['scope'] !== 'string') return;
          jwt.payload[claim] = jwt.payload['scope'].split(' ');
          delete jwt.payload['scope'];
        },
      },
    },
  };
}

function privateJwk(key: SigningKey): JWK {
  return { ...key.privateKey.export({ format: 'jwk' }), kid: key.kid, alg: key.alg, use: 'sig' } as JWK;
}

export function clientSecret(clientId: string): string {
  return `${clientId}-secret-${'x'.repeat(32)}`;
}
