/** The configuration's public face: load it from the environment, resolve it for an app, its types. */
export { resolveConfig, type AppConfig, type AppResources } from './app-config.js';
export type { AuthConfig, AuthKeyConfig, RemoteKeySetConfig, VerificationKeyConfig } from './groups/auth.js';
export { ConfigError, loadConfig } from './load.js';
export type { Config } from './schema.js';
