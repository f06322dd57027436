import { loadConfig } from '../src/config/config.js';
import { startApp } from '../tooling/start-app.js';

/**
 * One server process for the cluster cases: the app `src/main.ts` runs, on DATABASE_URL with
 * AUTH_JWT_SECRET, which also reports over IPC when its cache applied each membership change (its
 * own clock at the apply against the database clock in the payload, so neither the fan-out after
 * the apply nor the report's trip counts), and answers 'cpu' with its CPU time so far.
 */
const config = loadConfig(process.env);
if (!config.database.url || config.auth.key.kind !== 'secret') throw new Error('needs DATABASE_URL and AUTH_JWT_SECRET');
await startApp(
  config,
  { databaseUrl: config.database.url, authKey: config.auth.key },
  {
    created: (app) => {
      app.services.membershipCache.onChange((change, sentAtUs, appliedAtUs) => {
        process.send?.({ version: String(change.version), lagUs: appliedAtUs - Number(sentAtUs) });
      });
      process.on('message', (message) => {
        if (message !== 'cpu') return;
        const { user, system } = process.cpuUsage();
        process.send?.({ cpuUs: user + system });
      });
      process.once('SIGTERM', () => void app.stop().finally(() => process.exit(0)));
    },
  },
);
