// First: graphql-js must load in production mode.
import { PRODUCTION } from './production-mode.js';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config/config.js';
import { startApp } from '../tooling/start-app.js';

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
  const config = loadConfig({
    ...PRODUCTION,
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    AUTH_JWT_SECRET: secret,
  });
  let peakRssBeforeBytes = 0;
  let started = 0;
  // Created, not yet started: from here on it is the start alone that is measured.
  const created = () => {
    peakRssBeforeBytes = process.resourceUsage().maxRSS * 1024;
    started = performance.now();
  };
  const app = await startApp(config, { databaseUrl, authKey: { kind: 'secret', secret } }, { created });
  const startMs = performance.now() - started;
  const { cache } = app.services.membershipCache;
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
