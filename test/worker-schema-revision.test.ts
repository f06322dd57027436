import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { migrateOverSession } from '../src/db/migrations/migrate.js';
import { WORKER_SCHEMA_REVISION } from '../src/db/migrations/worker-schema.js';
import { createLogger } from '../src/observability/logger.js';
import { gql, sqlClient, startApp } from './support/harness.js';
import { createTwoRoles, type TwoRoles } from './support/two-roles.js';

/**
 * After an upgrade of graphile-worker, its schema is behind the build's until `migrate` runs as the
 * owner. The app role, which cannot migrate it, is refused at start in one line saying so, rather
 * than failing inside the worker; once the schema is current, the same start serves.
 */
const logger = createLogger({ env: 'test', logLevel: 'silent' });
let roles: TwoRoles;
let owner: pg.Client;
beforeAll(async () => {
  roles = await createTwoRoles(inject('adminDatabaseUrl'), 'worker_revision');
  await migrateOverSession(roles.url(roles.owner), logger, { grantTo: roles.app });
  owner = await sqlClient(roles.url(roles.owner));
});
afterAll(async () => {
  await owner?.end();
});

describe("graphile-worker's schema revision at start", () => {
  it('refuses the app role while the schema is behind the build, in one line; serves once the schema is current', async () => {
    // As an older graphile-worker left it: its newest migration not applied yet.
    await owner.query('DELETE FROM graphile_worker.migrations WHERE id = $1', [WORKER_SCHEMA_REVISION]);
    const refused = await startApp(roles.url(roles.app), { MIGRATE_ON_START: 'false' }).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(refused).toBe(
      `graphile-worker's schema is at revision ${WORKER_SCHEMA_REVISION - 1}, this build's graphile-worker needs ${WORKER_SCHEMA_REVISION}, and database role "${roles.app}" cannot migrate it: run migrate as the owner first (\`npm run migrate -- --grant-to ${roles.app}\`)`,
    );

    // Current again, as the owner's migrate leaves it (re-running the real migration is not possible:
    // it drops a trigger the schema no longer has), and granted again: the same start serves.
    await owner.query('INSERT INTO graphile_worker.migrations (id, breaking) VALUES ($1, false)', [WORKER_SCHEMA_REVISION]);
    await migrateOverSession(roles.url(roles.owner), logger, { grantTo: roles.app });
    const app = await startApp(roles.url(roles.app), { MIGRATE_ON_START: 'false' });
    try {
      const answer = await gql(app, 'mutation { leaveCommunityLayer(userId: "5") { status } }');
      expect(answer).toMatchObject({ data: { leaveCommunityLayer: { status: 'LEFT' } } });
    } finally {
      await app.stop();
    }
  });
});
