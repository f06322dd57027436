import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createApp, type App, type AppOptions } from '../src/app.js';
import { mintToken } from '../src/auth/tokens.js';
import { loadConfig, resolveConfig } from '../src/config/config.js';
import { connectDatabase } from '../src/db/database.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrateToLatest } from '../src/db/migrations/migrate.js';
import { createLogger } from '../src/observability/logger.js';
import { databaseCpuSeconds, type DatabaseCpu } from './database-cpu.js';
import { startServerProcesses, type ServerProcesses } from './processes.js';

const TEMPLATE = 'bench';
const SECRET = randomBytes(32).toString('base64url');

/**
 * One embedded PostgreSQL for the run and a migrated template database that each case clones, so
 * no case inherits another's rows. Apps and SQL clients a case opens are closed by `endCase`.
 */
export interface Cluster {
  token: string;
  freshDatabase(): Promise<string>;
  startApp(databaseUrl: string, options?: AppOptions): Promise<App>;
  stopApp(app: App): Promise<void>;
  /** `count` server processes of their own (not in this event loop) on the database. */
  startProcesses(databaseUrl: string, count: number, environment?: Record<string, string>, execArgv?: string[]): Promise<ServerProcesses>;
  sqlClient(databaseUrl: string): Promise<pg.Client>;
  /** CPU seconds PostgreSQL has used so far (see database-cpu.ts). */
  databaseCpuSeconds(): DatabaseCpu;
  endCase(): Promise<void>;
  stop(): Promise<void>;
}

export async function startCluster(): Promise<Cluster> {
  const parent = await mkdtemp(join(tmpdir(), 'cl-bench-'));
  const embedded = await startEmbeddedPostgres({ dataDir: join(parent, 'pg'), database: TEMPLATE, persistent: false, log: () => {} });
  const apps = new Set<App>();
  const clients = new Set<pg.Client>();
  const processes = new Set<ServerProcesses>();
  try {
    const database = connectDatabase({ url: embedded.url, poolMax: 2, logger: createLogger({ env: 'test', logLevel: 'silent' }) });
    await migrateToLatest(database.db).finally(() => database.close());
  } catch (error) {
    await embedded.stop();
    await rm(parent, { recursive: true, force: true });
    throw error;
  }
  const token = await mintToken(SECRET, { sub: '1', scope: 'community:admin signals:write community:feed', expiresIn: '2h' });

  const cluster: Cluster = {
    token,
    async freshDatabase() {
      const name = `bench_${randomBytes(4).toString('hex')}`;
      // Cloning needs the template free of sessions, so the statement runs from "postgres".
      const admin = await cluster.sqlClient(withDatabase(embedded.url, 'postgres'));
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`);
      return withDatabase(embedded.url, name);
    },
    async startApp(databaseUrl, options = {}) {
      const config = loadConfig({ NODE_ENV: 'test', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'silent' });
      const app = createApp(resolveConfig(config, { databaseUrl, authKey: { kind: 'secret', secret: SECRET } }), options);
      apps.add(app);
      await app.start();
      return app;
    },
    async stopApp(app) {
      apps.delete(app);
      await app.stop();
    },
    async startProcesses(databaseUrl, count, environment = {}, execArgv = []) {
      const started = await startServerProcesses({
        count,
        execArgv,
        entry: 'bench/server-process.ts',
        environment: { ...environment, DATABASE_URL: databaseUrl, AUTH_JWT_SECRET: SECRET },
      });
      processes.add(started);
      return started;
    },
    async sqlClient(databaseUrl) {
      const client = new pg.Client({ connectionString: databaseUrl });
      clients.add(client);
      await client.connect();
      return client;
    },
    databaseCpuSeconds: () => databaseCpuSeconds(embedded.pgdata),
    async endCase() {
      await Promise.allSettled([...clients].map((client) => client.end()));
      await Promise.allSettled([...apps].map((app) => app.stop()));
      await Promise.allSettled([...processes].map((started) => started.stop()));
      clients.clear();
      apps.clear();
      processes.clear();
    },
    async stop() {
      await cluster.endCase();
      await embedded.stop();
      await rm(parent, { recursive: true, force: true });
    },
  };
  return cluster;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * POSTs one GraphQL operation to an app here or a server process (`{ url }`); throws on any error
 * so a case cannot count a failure as a result.
 */
export async function graphql(target: Pick<App, 'url'>, token: string, query: string, variables: Record<string, unknown>): Promise<any> {
  const response = await fetch(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const result = (await response.json()) as { data?: unknown; errors?: { message: string }[] };
  if (response.status !== 200 || result.errors) throw new Error(`GraphQL ${response.status}: ${JSON.stringify(result.errors)}`);
  return result.data;
}

/** Makes users LEFT in one statement, as an operator would, and waits until every cache knows. */
export async function leaveUsers(client: pg.Client, userIds: string[], apps: App[]): Promise<void> {
  await client.query('SELECT leave_community_layer(u::u64) FROM unnest($1::text[]) AS u', [userIds]);
  await eventually(() => apps.every((app) => app.services.membership.cache.size === userIds.length));
}

async function eventually(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
