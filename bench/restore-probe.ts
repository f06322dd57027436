// First: graphql-js must load in production mode.
import { PRODUCTION } from './production-mode.js';
import { randomBytes } from 'node:crypto';
import { createApp } from '../src/app.js';
import { loadConfig, resolveConfig } from '../src/config/config.js';

/** What one instance's start cost, measured in a process of its own (see cases/restore.ts). */
export interface RestoreProbe {
  startMs: number;
  /** Peak resident set size of the process before the start, and by its end. */
  peakRssBeforeBytes: number;
  peakRssBytes: number;
  entries: number;
  tableBytes: number;
  /** process.memoryUsage() once started: where the memory is (garbage not yet collected included). */
  memoryAfter: NodeJS.MemoryUsage;
}

// Runs in a child process: the peak RSS of the bench process itself says nothing about one start.
process.once('message', async (databaseUrl: string) => {
  const secret = randomBytes(32).toString('base64url');
  const config = loadConfig({ ...PRODUCTION, PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, AUTH_JWT_SECRET: secret });
  const app = createApp(resolveConfig(config, { databaseUrl, authKey: { kind: 'secret', secret } }));
  const peakRssBeforeBytes = process.resourceUsage().maxRSS * 1024;
  const started = performance.now();
  await app.start();
  const startMs = performance.now() - started;
  const { cache } = app.services.membership;
  const probe: RestoreProbe = {
    startMs,
    peakRssBeforeBytes,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    entries: cache.size,
    tableBytes: cache.tableBytes,
    memoryAfter: process.memoryUsage(),
  };
  await app.stop();
  process.send!(probe, () => process.exit(0));
});
