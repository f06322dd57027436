import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { startApp } from '../tooling/start-app.js';
import { freshDatabase, TEST_SECRET } from './support/harness.js';

/** Whether a loopback port can be listened on right now. */
function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Two API ports whose derived metrics ports are free too (below the ephemeral range, so the sum fits). */
async function portPairs(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let port = 20_000 + Math.floor(Math.random() * 5_000); ports.length < count; port += 7) {
    if ((await free(port)) && (await free(port + 5464))) ports.push(port);
  }
  return ports;
}

describe('METRICS_PORT unset', () => {
  const apps: App[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
  });

  it('two instances on one machine with different PORTs both start, each with metrics beside its own port', async () => {
    const databaseUrl = await freshDatabase();
    for (const port of await portPairs(2)) {
      const config = loadConfig({
        NODE_ENV: 'test',
        PORT: String(port),
        LOG_LEVEL: 'silent',
        DATABASE_URL: databaseUrl,
        AUTH_JWT_SECRET: TEST_SECRET,
      });
      expect(config.metrics.port).toBe(port + 5464);
      const app = await startApp(config, { databaseUrl, authKey: { kind: 'secret', secret: TEST_SECRET } });
      apps.push(app);
      expect(new URL(app.metricsUrl).port).toBe(String(port + 5464));
      const answer = await fetch(app.metricsUrl);
      expect(answer.status).toBe(200);
      expect(await answer.text()).toMatch(/^# HELP community_/m);
    }
  });

  it('is 9464 with the default PORT, any free port with PORT=0 or past 65535, and METRICS_PORT wins when set', () => {
    expect(loadConfig({}).metrics.port).toBe(9464);
    expect(loadConfig({ PORT: '0' }).metrics.port).toBe(0);
    expect(loadConfig({ PORT: '61000' }).metrics.port).toBe(0);
    expect(loadConfig({ PORT: '4001', METRICS_PORT: '9100' }).metrics.port).toBe(9100);
    expect(loadConfig({ PORT: '4001', METRICS_PORT: '0' }).metrics.port).toBe(0);
  });
});
