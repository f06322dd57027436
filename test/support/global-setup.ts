import type { TestProject } from 'vitest/node';
import type { EmbeddedDatabase } from '../../support/postgres/embedded.js';
import { startTemporaryPostgres } from '../../support/postgres/temporary-postgres.js';
import { migratedTemplate } from '../../support/databases.js';
import { MissingPrerequisite, pgbouncerBinary, startPgBouncer, type PgBouncer } from '../../support/pgbouncer.js';
import { replicationBinaries } from '../../support/replicated-postgres.js';

export const TEMPLATE_DATABASE = 'community_layer_test_template';

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
  requirePrerequisites();
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    embedded = await startTemporaryPostgres('postgres');
    adminUrl = embedded.url;
  }
  await migratedTemplate(adminUrl, TEMPLATE_DATABASE);
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
}
