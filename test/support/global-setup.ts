import pg from 'pg';
import type { TestProject } from 'vitest/node';
import type { EmbeddedDatabase } from '../../tooling/postgres/embedded.js';
import { startTemporaryPostgres } from '../../tooling/postgres/temporary-postgres.js';
import { migratedTemplate } from '../../tooling/databases.js';
import { startPgBouncer, type PgBouncer } from '../../tooling/pgbouncer.js';
import { MissingPrerequisite, pgbouncerBinary } from '../../tooling/pgbouncer-binary.js';

export const TEMPLATE_DATABASE = 'community_layer_test_template';
/**
 * Sessions the run's PostgreSQL takes: three files at once, each with a cluster of instances
 * (pools, listeners, queue sessions), besides PgBouncer's server sessions, which stay open for
 * minutes after their test, reached PostgreSQL's default 100 ("too many clients already").
 */
export const TEST_MAX_CONNECTIONS = 200;

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    /** adminDatabaseUrl through a PgBouncer in transaction mode. */
    pooledAdminDatabaseUrl: string;
  }
}

let embedded: EmbeddedDatabase | null = null;
let pgbouncer: PgBouncer | null = null;

/**
 * One PostgreSQL for the whole run (embedded, or TEST_DATABASE_URL's server), and one migrated
 * template database that every test file clones: a fresh database per file in milliseconds.
 */
export async function setup(project: TestProject): Promise<void> {
  await requirePrerequisites();
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    embedded = await startTemporaryPostgres('postgres');
    adminUrl = embedded.url;
    await allowConnections(embedded, TEST_MAX_CONNECTIONS);
  }
  await migratedTemplate(adminUrl, TEMPLATE_DATABASE);
  project.provide('adminDatabaseUrl', adminUrl);
  pgbouncer = await startPgBouncer(adminUrl).catch(async (error: unknown) => {
    await embedded?.stop();
    throw error;
  });
  project.provide('pooledAdminDatabaseUrl', pgbouncer.pooled(adminUrl));
}

/** max_connections takes effect at a start only: set, then the server restarted on its port. */
async function allowConnections(database: EmbeddedDatabase, maxConnections: number): Promise<void> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(`ALTER SYSTEM SET max_connections = ${maxConnections}`);
  } finally {
    await client.end();
  }
  await database.pause();
  await database.resume();
}

/**
 * Before anything starts, what the run needs from the machine and npm did not bring: PgBouncer,
 * fetched when missing (support/pgbouncer-binary.ts). Only where that is impossible does the run end,
 * with its paragraph alone: thrown, it would come after vitest's "No test files found" and a banner.
 */
async function requirePrerequisites(): Promise<void> {
  try {
    await pgbouncerBinary();
  } catch (error) {
    if (!(error instanceof MissingPrerequisite)) throw error;
    process.stderr.write(`\n${error.stack}\n\n`);
    process.exit(1);
  }
}

export async function teardown(): Promise<void> {
  await pgbouncer?.stop();
  await embedded?.stop();
}
