import pg from 'pg';
import pino, { type Logger } from 'pino';
import { afterAll, beforeAll, inject } from 'vitest';
import type { App, AppOptions } from '../../src/app.js';
import { mintToken } from '../../src/auth/tokens.js';
import { cloneDatabase } from '../../tooling/databases.js';
import { TEMPLATE_DATABASE } from './global-setup.js';
import { boundedStop, within } from './bounded.js';
import { postGraphQL, type GraphQLResponse } from '../../tooling/graphql-client.js';
import { startServerProcess, type ServerProcess } from '../../tooling/server-process.js';
import { startLocalApp } from '../../tooling/start-app.js';

export { eventually } from '../../tooling/eventually.js';
export type { GraphQLResponse } from '../../tooling/graphql-client.js';

/** A database of its own, cloned from the migrated template. */
export function freshDatabase(): Promise<string> {
  return cloneDatabase(inject('adminDatabaseUrl'), TEMPLATE_DATABASE);
}

/**
 * How instances reach the database: straight, or the way production does it, the pool through a
 * PgBouncer in transaction mode (the role carrying the session limits) and LISTEN on a direct
 * session.
 */
export type Route = 'direct' | 'pgbouncer';
export const ROUTES: Route[] = ['direct', 'pgbouncer'];

/** The URL and variables an instance on `route` gets for the database at `directUrl`. */
export function routed(directUrl: string, route: Route): { url: string; environment: Record<string, string> } {
  if (route === 'direct') return { url: directUrl, environment: {} };
  const pooled = new URL(directUrl);
  const bouncer = new URL(inject('pooledAdminDatabaseUrl'));
  pooled.host = bouncer.host;
  return { url: pooled.toString(), environment: { DATABASE_LISTEN_URL: directUrl, DB_SESSION_LIMITS: 'server' } };
}

/**
 * The session limits of test instances: a loaded test machine stretches lock waits far beyond
 * production's (the timeout tests set their own). Passed as DB_*_MS, or set on the role.
 */
const TEST_SESSION_LIMITS = { statement_timeout: '120000ms', lock_timeout: '60000ms', idle_in_transaction_session_timeout: '15000ms' };

/** The test session limits, set on the role for one database (what DB_SESSION_LIMITS=server expects). */
export async function setRoleLimits(directUrl: string): Promise<void> {
  const database = new URL(directUrl).pathname.slice(1);
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await client.connect();
  try {
    for (const [setting, value] of Object.entries(TEST_SESSION_LIMITS)) {
      await client.query(`ALTER ROLE CURRENT_USER IN DATABASE ${client.escapeIdentifier(database)} SET ${setting} = '${value}'`);
    }
  } finally {
    await client.end();
  }
}

/** A real app instance on an ephemeral port; several may share one database. */
export async function startApp(databaseUrl: string, environment: Record<string, string> = {}, options: AppOptions = {}): Promise<App> {
  const app = await startLocalApp(databaseUrl, {
    secret: TEST_SECRET,
    options,
    environment: {
      LISTENER_HEARTBEAT_MS: '1000',
      LISTENER_BACKOFF_MIN_MS: '20',
      LISTENER_BACKOFF_MAX_MS: '500',
      DB_STATEMENT_TIMEOUT_MS: String(parseInt(TEST_SESSION_LIMITS.statement_timeout, 10)),
      DB_LOCK_TIMEOUT_MS: String(parseInt(TEST_SESSION_LIMITS.lock_timeout, 10)),
      DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: String(parseInt(TEST_SESSION_LIMITS.idle_in_transaction_session_timeout, 10)),
      DB_ACQUIRE_TIMEOUT_MS: '30000',
      ...environment,
    },
  });
  return boundedStop(app);
}

/** `src/main.ts` as production runs it, in a process of its own on the database, ready; the caller stops it. */
export function startServer(databaseUrl: string, environment: Record<string, string> = {}): Promise<ServerProcess> {
  return startServerProcess({
    environment: { NODE_ENV: 'production', DATABASE_URL: databaseUrl, AUTH_JWT_SECRET: TEST_SECRET, LOG_LEVEL: 'info', ...environment },
  });
}

export interface Cluster {
  /** The direct URL (for SQL); instances use `route`. */
  databaseUrl: string;
  route: Route;
  apps: App[];
  /** One more instance on the same database and route (the caller stops it). */
  startInstance(environment?: Record<string, string>, options?: AppOptions): Promise<App>;
  /** Plain SQL on the same database, for assertions and for changes made behind the service's back. */
  db: pg.Client;
  stop(): Promise<void>;
}

/** A fresh database with one app per entry of `instances` (its options) and a SQL client. */
export async function startCluster(
  instances: AppOptions[] = [{}],
  route: Route = 'direct',
  environment: Record<string, string> = {},
): Promise<Cluster> {
  const databaseUrl = await freshDatabase();
  if (route === 'pgbouncer') await setRoleLimits(databaseUrl);
  const target = routed(databaseUrl, route);
  const startInstance = (environment: Record<string, string> = {}, options: AppOptions = {}) =>
    startApp(target.url, { ...target.environment, ...environment }, options);
  const apps = await Promise.all(instances.map((options) => startInstance(environment, options)));
  const db = await sqlClient(databaseUrl);
  return {
    databaseUrl,
    route,
    apps,
    startInstance,
    db,
    stop: async () => {
      await within("the end of the cluster's SQL client", db.end());
      await Promise.all(apps.map((app) => app.stop()));
    },
  };
}

/** A cluster for the whole file: started before its tests, stopped after; `onStart` gets it first. */
export function useCluster(
  instances: AppOptions[],
  onStart: (cluster: Cluster) => void,
  route: Route = 'direct',
  environment: Record<string, string> = {},
): void {
  let cluster: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startCluster(instances, route, environment);
    onStart(cluster);
  });
  afterAll(() => cluster?.stop());
}

export const TEST_SECRET = 'test-secret-test-secret-test-secret-0123456789';

/** A token for `sub` with `scope`, signed with the test secret. */
export function token(sub: string, scope?: string, expiresIn?: string): Promise<string> {
  return mintToken(TEST_SECRET, { sub, ...(scope ? { scope } : {}), ...(expiresIn ? { expiresIn } : {}) });
}

/** A back-end service allowed everything: the default caller of tests that are not about auth. */
const serviceToken = token('1', 'community:admin signals:write', '24h');

/**
 * POSTs a GraphQL operation over real HTTP, as the all-scopes service unless `bearer` says
 * otherwise (null: no Authorization header).
 */
export async function gql<T = Record<string, any>>(
  app: App,
  query: string,
  variables?: Record<string, unknown>,
  bearer?: string | null,
): Promise<GraphQLResponse<T>> {
  return postGraphQL<T>(app.url, query, variables, bearer === undefined ? await serviceToken : bearer);
}

/** A plain SQL connection for assertions on what was written. */
export async function sqlClient(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return client;
}

export async function readiness(app: App): Promise<{ ok: boolean; checks: Record<string, boolean> }> {
  const response = await fetch(new URL('/readyz', app.url));
  return { ok: response.status === 200, ...((await response.json()) as { checks: Record<string, boolean> }) };
}

/** One sample of /metrics (0 when absent), e.g. metric(app, 'x_total', { outcome: 'ok' }). */
export async function metric(app: App, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(app.metricsUrl)).text();
  const selector = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .join(',');
  const line = text.split('\n').find((candidate) => candidate.startsWith(selector ? `${name}{${selector}} ` : `${name} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** Row counts of every table a request could write, to prove a refused one wrote nothing. */
export async function rowCounts(db: pg.Client): Promise<string> {
  const { rows } = await db.query(`SELECT concat_ws('/',
    (SELECT count(*) FROM community_membership), (SELECT count(*) FROM leave_episode), (SELECT count(*) FROM signal),
    (SELECT count(*) FROM contribution), (SELECT count(*) FROM cohort_contribution), (SELECT count(*) FROM community_item_aggregate),
    (SELECT sum(signal_count) FROM community_item_aggregate), (SELECT count(*) FROM cohort_item_aggregate),
    (SELECT max(version) FROM membership_clock)) AS n`);
  return rows[0].n;
}

/** A logger that keeps its entries, for asserting what an app logged. */
export function capturedLog(): { logger: Logger; entries: Record<string, any>[] } {
  const entries: Record<string, any>[] = [];
  return { logger: pino({ level: 'info' }, { write: (line: string) => void entries.push(JSON.parse(line)) }), entries };
}
