import { createApp, type App, type AppOptions } from '../src/app.js';
import { loadConfig, resolveConfig, type AppResources, type Config } from '../src/config/config.js';

export interface StartOptions extends AppOptions {
  /**
   * Called with the app once created, before it starts: to stop it on a signal that comes during
   * start-up (`src/main.ts`), to hook into its services, to measure the start alone (the bench).
   */
  created?: (app: App) => void;
}

/**
 * The one start-up of an app (`npm start`, tests, the bench's processes): the configuration with
 * the resources its entry point resolved, created by the composition root, started.
 */
export async function startApp(config: Config, resources: AppResources, { created, ...options }: StartOptions = {}): Promise<App> {
  const app = createApp(resolveConfig(config, resources), options);
  created?.(app);
  await app.start();
  return app;
}

/**
 * An app on an ephemeral loopback port, configured from `environment` over quiet defaults, its
 * tokens signed with `secret` unless the environment configures another key (tests, the bench).
 */
export function startLocalApp(
  databaseUrl: string,
  { secret, environment = {}, options = {} }: { secret: string; environment?: Record<string, string>; options?: StartOptions },
): Promise<App> {
  const config = loadConfig({ NODE_ENV: 'test', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, AUTH_JWT_SECRET: secret, ...environment });
  const authKey = config.auth.key.kind === 'development' ? { kind: 'secret' as const, secret } : config.auth.key;
  return startApp(config, { databaseUrl, authKey }, options);
}
