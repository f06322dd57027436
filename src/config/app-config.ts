import type { AuthConfig, VerificationKeyConfig } from './groups/auth.js';
import type { ReceiptSigningJwk } from './groups/downstream.js';
import type { Config } from './schema.js';

/**
 * What `createApp` runs on: the configuration with its resources resolved (a database to connect
 * to, a key to verify tokens with), so an app can never start half-configured.
 */
export type AppConfig = Omit<Config, 'database' | 'auth'> & {
  database: Config['database'] & { url: string; listenUrl: string };
  auth: AuthConfig<VerificationKeyConfig>;
  /** Pre-filled in GraphiQL; only ever set in development, when the secret was generated locally. */
  developmentToken: string | null;
  /** Signs receipts; null: generated per process outside production, none in production. */
  receiptKey: ReceiptSigningJwk | null;
};

/** What an entry point resolves before an app can start (the database it started, the key it read). */
export interface AppResources {
  databaseUrl: string;
  authKey: VerificationKeyConfig;
  developmentToken?: string;
  receiptKey?: ReceiptSigningJwk | null;
}

export function resolveConfig(config: Config, resources: AppResources): AppConfig {
  return {
    ...config,
    database: { ...config.database, url: resources.databaseUrl, listenUrl: config.database.listenUrl ?? resources.databaseUrl },
    auth: { ...config.auth, key: resources.authKey },
    developmentToken: resources.developmentToken ?? null,
    receiptKey: resources.receiptKey !== undefined ? resources.receiptKey : (config.downstream.receiptSigningKey ?? null),
  };
}
