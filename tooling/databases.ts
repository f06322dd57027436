import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateOverSession } from '../src/db/migrations/migrate.js';
import { createLogger } from '../src/observability/logger.js';

/**
 * Databases for tests and the bench, on one PostgreSQL reached with `adminUrl` (a superuser on
 * any database): a template migrated once, and a database of its own per test or case, cloned
 * from it in milliseconds (graphile-worker's way). No vitest here: the bench imports it too.
 */

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** (Re)creates the database `name` and migrates it to the latest version. */
export async function migratedTemplate(adminUrl: string, name: string): Promise<void> {
  await onAdmin(adminUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  });
  await migrateOverSession(withDatabase(adminUrl, name), createLogger({ env: 'test', logLevel: 'silent' }));
}

/** A new database cloned from `template` (which no session may be connected to); its URL. */
export function cloneDatabase(adminUrl: string, template: string, prefix = 'test'): Promise<string> {
  return createDatabase(adminUrl, prefix, template);
}

/** A new database with no tables at all (never migrated); its URL. */
export function emptyDatabase(adminUrl: string, prefix = 'empty'): Promise<string> {
  return createDatabase(adminUrl, prefix, null);
}

async function createDatabase(adminUrl: string, prefix: string, template: string | null): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await onAdmin(adminUrl, async (client) => {
    await client.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${client.escapeIdentifier(template)}` : ''}`);
  });
  return withDatabase(adminUrl, name);
}

/** Never on the template: cloning needs it free of sessions. */
async function onAdmin(adminUrl: string, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
