import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { App, AppOptions } from '../src/app.js';
import { mintToken } from '../src/auth/tokens.js';
import { startTemporaryPostgres } from '../tooling/postgres/temporary-postgres.js';
import { cloneDatabase, migratedTemplate } from '../tooling/databases.js';
import { eventually } from '../tooling/eventually.js';
import { postGraphQL } from '../tooling/graphql-client.js';
import { startLocalApp } from '../tooling/start-app.js';
import { databaseCpuSeconds, type DatabaseCpu } from './database-cpu.js';
import { PRODUCTION } from './production-mode.js';
import { startServerProcesses, type ServerProcesses } from './processes.js';

const TEMPLATE = 'bench';
const SECRET = randomBytes(32).toString('base64url');
/**
 * The bench's own caller (`token`, an admin) measures throughput: its budget never binds (the
 * default 20,000 points a second is below what batched cases send), while the limiter still runs
 * and charges it. Case 22 floods with a user token of its own.
 */
const UNBOUND_BENCH_CALLER = { FAIR_SHARE_ADMIN_CAPACITY: '100000000', FAIR_SHARE_ADMIN_RATE: '100000000' };

/**
 * One embedded PostgreSQL for the run and a migrated template database that each case clones, so
 * no case inherits another's rows. Apps and SQL clients a case opens are closed by `endCase`.
 */
export interface Cluster {
  token: string;
  /** A token of another caller (an attacker's, say), valid for two hours. */
  tokenFor(sub: string, scope: string): Promise<string>;
  freshDatabase(): Promise<string>;
  /** In production mode; `environment`: settings beyond the defaults (e.g. a multi-host DATABASE_URL's listener timings). */
  startApp(databaseUrl: string, options?: AppOptions, environment?: Record<string, string>): Promise<App>;
  stopApp(app: App): Promise<void>;
  /** `count` server processes of their own (not in this event loop) on the database, in production mode. */
  startProcesses(databaseUrl: string, count: number, environment?: Record<string, string>, execArgv?: string[]): Promise<ServerProcesses>;
  sqlClient(databaseUrl: string): Promise<pg.Client>;
  /** CPU seconds PostgreSQL has used so far (see database-cpu.ts). */
  databaseCpuSeconds(): DatabaseCpu;
  endCase(): Promise<void>;
  stop(): Promise<void>;
}

export async function startCluster(): Promise<Cluster> {
  const embedded = await startTemporaryPostgres('postgres');
  const apps = new Set<App>();
  const clients = new Set<pg.Client>();
  const processes = new Set<ServerProcesses>();
  await migratedTemplate(embedded.url, TEMPLATE).catch(async (error: unknown) => {
    await embedded.stop();
    throw error;
  });
  const token = await mintToken(SECRET, { sub: '1', scope: 'community:admin signals:write community:feed', expiresIn: '2h' });

  const cluster: Cluster = {
    token,
    tokenFor: (sub, scope) => mintToken(SECRET, { sub, scope, expiresIn: '2h' }),
    freshDatabase: () => cloneDatabase(embedded.url, TEMPLATE, 'bench'),
    async startApp(databaseUrl, options = {}, environment = {}) {
      const app = await startLocalApp(databaseUrl, {
        secret: SECRET,
        options,
        environment: { ...PRODUCTION, ...UNBOUND_BENCH_CALLER, ...environment },
      });
      apps.add(app);
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
        environment: { ...PRODUCTION, ...UNBOUND_BENCH_CALLER, ...environment, DATABASE_URL: databaseUrl, AUTH_JWT_SECRET: SECRET },
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
    },
  };
  return cluster;
}

/**
 * POSTs one GraphQL operation to an app here or a server process (`{ url }`); throws on any error
 * so a case cannot count a failure as a result.
 */
export async function graphql(target: Pick<App, 'url'>, token: string, query: string, variables: Record<string, unknown>): Promise<any> {
  const result = await postGraphQL(target.url, query, variables, token);
  if (result.status !== 200 || result.errors) throw new Error(`GraphQL ${result.status}: ${JSON.stringify(result.errors)}`);
  return result.data;
}

/** Makes users LEFT in one statement, as an operator would, and waits until every cache knows. */
export async function leaveUsers(client: pg.Client, userIds: string[], apps: App[]): Promise<void> {
  await client.query('SELECT leave_community_layer(u::u64) FROM unnest($1::text[]) AS u', [userIds]);
  await eventually(() => apps.every((app) => app.services.membershipCache.cache.size === userIds.length), 30_000);
}
