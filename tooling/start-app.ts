import { createApp, type App, type AppOptions } from '../src/app.js';
import { loadConfig, resolveConfig, type AppConfig, type AppResources, type Config } from '../src/config/config.js';

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

interface LocalSettings {
  secret: string;
  environment?: Record<string, string>;
}

/**
 * The configuration of a test or bench instance: from `environment` over quiet defaults on an
 * ephemeral loopback port, its tokens signed with `secret` unless the environment configures
 * another key.
 */
function localConfig(databaseUrl: string, { secret, environment = {} }: LocalSettings): { config: Config; resources: AppResources } {
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    AUTH_JWT_SECRET: secret,
    ...environment,
  });
  const authKey = config.auth.key.kind === 'development' ? { kind: 'secret' as const, secret } : config.auth.key;
  return { config, resources: { databaseUrl, authKey } };
}

/** What `startLocalApp` would run on, resolved and not started (to build an app's parts alone). */
export function localAppConfig(databaseUrl: string, settings: LocalSettings): AppConfig {
  const { config, resources } = localConfig(databaseUrl, settings);
  return resolveConfig(config, resources);
}

/** An app on `localAppConfig`, started (tests, the bench). */
export function startLocalApp(
  databaseUrl: string,
  { options = {}, ...settings }: LocalSettings & { options?: StartOptions },
): Promise<App> {
  const { config, resources } = localConfig(databaseUrl, settings);
  return startApp(config, resources, options);
}
