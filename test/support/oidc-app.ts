import type pg from 'pg';
import type { Logger } from 'pino';
import { afterAll, beforeAll, onTestFinished } from 'vitest';
import type { App } from '../../src/app.js';
import { eventually, freshDatabase, readiness, sqlClient, startApp } from './harness.js';
import { IdentityProvider, type IdentityProviderOptions, oidcEnvironment } from './identity-provider.js';

export interface OidcApp {
  idp: IdentityProvider;
  databaseUrl: string;
  app: App;
  db: pg.Client;
}

/** A test identity provider and a ready app that trusts it (discovery), on a fresh database, for the file's tests. */
export function useIdentityProviderApp(options: IdentityProviderOptions, started: (oidc: OidcApp) => void): void {
  let oidc: Partial<OidcApp> = {};
  beforeAll(async () => {
    const idp = await IdentityProvider.start(options);
    oidc = { idp };
    const databaseUrl = await freshDatabase();
    const app = await startApp(databaseUrl, oidcEnvironment(idp));
    oidc = { idp, databaseUrl, app, db: await sqlClient(databaseUrl) };
    await eventually(async () => (await readiness(app)).ok);
    started(oidc as OidcApp);
  });
  afterAll(async () => {
    await oidc.db?.end();
    await oidc.app?.stop();
    await oidc.idp?.stop();
  });
}

/** Another app on `databaseUrl` trusting `idp` with these settings changed (no listener), stopped when the test ends. */
export async function oidcInstance(
  databaseUrl: string,
  idp: IdentityProvider,
  overrides: Record<string, string>,
  logger?: Logger,
): Promise<App> {
  const app = await startApp(databaseUrl, oidcEnvironment(idp, overrides), { membershipSync: false, ...(logger ? { logger } : {}) });
  onTestFinished(() => app.stop());
  return app;
}
