import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { connectDatabase } from '../../src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { migrateToLatest } from '../../src/db/migrations/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { MissingPrerequisite, pgbouncerBinary, startPgBouncer, type PgBouncer } from './pgbouncer.js';
import { replicationBinaries } from './replicated-postgres.js';

export const TEMPLATE_DATABASE = 'community_layer_test_template';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    /** adminDatabaseUrl through a PgBouncer in transaction mode. */
    pooledAdminDatabaseUrl: string;
  }
}

let embedded: EmbeddedDatabase | null = null;
let dataParent: string | null = null;
let pgbouncer: PgBouncer | null = null;

/**
 * One PostgreSQL for the whole run (embedded, or TEST_DATABASE_URL's server), and one migrated
 * template database that every test file clones: a fresh database per file in milliseconds.
 */
export async function setup(project: TestProject): Promise<void> {
  requirePrerequisites();
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    dataParent = await mkdtemp(path.join(tmpdir(), 'community-layer-test-'));
    embedded = await startEmbeddedPostgres({ dataDir: path.join(dataParent, 'pg'), database: 'postgres', persistent: false, log: () => undefined });
    adminUrl = embedded.url;
  }
  await recreateDatabase(adminUrl, TEMPLATE_DATABASE);
  const templateUrl = withDatabase(adminUrl, TEMPLATE_DATABASE);
  const database = connectDatabase({ url: templateUrl, poolMax: 2, logger: createLogger({ env: 'test', logLevel: 'silent' }) });
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  project.provide('adminDatabaseUrl', adminUrl);
  pgbouncer = await startPgBouncer(adminUrl).catch(async (error: unknown) => {
    await embedded?.stop();
    throw error;
  });
  project.provide('pooledAdminDatabaseUrl', pgbouncer.pooled(adminUrl));
}

/**
 * Before anything starts, what the run needs from the machine. A missing one ends the run with its
 * paragraph alone: thrown, it would come after vitest's "No test files found" and an error banner.
 */
function requirePrerequisites(): void {
  try {
    pgbouncerBinary();
    replicationBinaries();
  } catch (error) {
    if (!(error instanceof MissingPrerequisite)) throw error;
    process.stderr.write(`\n${error.stack}\n\n`);
    process.exit(1);
  }
}

export async function teardown(): Promise<void> {
  await pgbouncer?.stop();
  await embedded?.stop();
  if (dataParent) await rm(dataParent, { recursive: true, force: true });
}

async function recreateDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
