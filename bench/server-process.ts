import { createApp } from '../src/app.js';
import { loadConfig, resolveConfig } from '../src/config/config.js';

/**
 * One server process for the cluster cases: the app `src/main.ts` runs, on DATABASE_URL with
 * AUTH_JWT_SECRET, which also reports over IPC when it applied each membership change (its own
 * clock against the database clock in the payload, so the report's trip does not count).
 */
const config = loadConfig(process.env);
if (!config.database.url || config.auth.key.kind !== 'secret') throw new Error('needs DATABASE_URL and AUTH_JWT_SECRET');
const app = createApp(resolveConfig(config, { databaseUrl: config.database.url, authKey: config.auth.key }));
app.services.membership.onChange((change, sentAtUs) => {
  const lagUs = (performance.timeOrigin + performance.now()) * 1000 - Number(sentAtUs);
  process.send?.({ version: String(change.version), lagUs });
});
process.once('SIGTERM', () => void app.stop().finally(() => process.exit(0)));
await app.start();
