import type { Logger } from 'pino';
import type { AuthConfig, VerificationKeyConfig } from '../config/config.js';
import { discoverJwksUri } from './discovery.js';
import { staticKeySource, type KeySource } from './key-source.js';
import { RemoteKeySet } from './remote-key-set.js';

/** The configured source; `development` must have been resolved to a secret first (main does). */
export function createKeySource(auth: AuthConfig<VerificationKeyConfig>, logger: Logger): KeySource {
  const { key } = auth;
  switch (key.kind) {
    case 'secret':
    case 'publicKey':
      return staticKeySource(key);
    case 'jwks':
      return new RemoteKeySet({ ...auth.jwks, logger, locate: async () => new URL(key.url) });
    case 'oidc':
      return new RemoteKeySet({
        ...auth.jwks,
        logger,
        locate: async () => {
          const jwksUri = await discoverJwksUri(key.issuer, auth.jwks.timeoutMs);
          logger.info({ issuer: key.issuer, jwksUri: jwksUri.href }, 'OpenID provider discovered');
          return jwksUri;
        },
      });
  }
}
