import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { App } from '../src/app.js';
import { migrateOverSession } from '../src/db/migrations/migrate.js';
import { readSqlFile } from '../src/db/migrations/sql-files.js';
import { createLogger } from '../src/observability/logger.js';
import { eventually, gql, sqlClient, startApp } from './support/harness.js';
import { createTwoRoles, type TwoRoles } from './support/two-roles.js';
import { receiver, type Receiver } from './support/webhook-receivers.js';

/**
 * The two roles of docs/operations.md ("Roles and grants"), on a database of their own: the owner
 * migrates (graphile-worker's schema included) and grants; the service runs as `app`, which holds
 * CONNECT and the granted privileges only, and cannot write the boundary tables but through the
 * service's functions.
 */
let roles: TwoRoles;
const asCode = (promise: Promise<unknown>) =>
  promise.then(
    () => 'done',
    (error: { code?: string }) => error.code,
  );

let admin: pg.Client;
let app: App;
let hook: Receiver;
beforeAll(async () => {
  roles = await createTwoRoles(inject('adminDatabaseUrl'), 'least_privilege');
  await migrateOverSession(roles.url(roles.owner), createLogger({ env: 'test', logLevel: 'silent' }), { grantTo: roles.app });
  admin = await sqlClient(roles.url());
  hook = await receiver((_req, res) => void res.writeHead(200).end());
  app = await startApp(roles.url(roles.app), {
    MIGRATE_ON_START: 'false',
    WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1',
    WEBHOOK_POLL_MS: '100',
    FAIR_SHARE_INSTANCES: '2',
  });
});
afterAll(async () => {
  await app?.stop();
  await hook?.close();
  await admin?.end();
});

async function ok<T = Record<string, any>>(query: string, variables?: Record<string, unknown>): Promise<T> {
  const response = await gql<T>(app, query, variables);
  expect(response.errors).toBeUndefined();
  return response.data!;
}

describe('least privilege: the service as a role that owns nothing and may create nothing', () => {
  it('the app role may create nothing and owns nothing; the boundary functions run as the owner', async () => {
    const { rows } = await admin.query(
      `SELECT has_database_privilege($1, current_database(), 'CREATE') AS database,
              has_schema_privilege($1, 'public', 'CREATE') AS public, has_schema_privilege($1, 'graphile_worker', 'CREATE') AS worker,
              (SELECT count(*)::int FROM pg_class WHERE relowner = $1::regrole) AS owned`,
      [roles.app],
    );
    expect(rows[0]).toEqual({ database: false, public: false, worker: false, owned: 0 });
    const definers = await admin.query(
      `SELECT proname, pronargs AS arguments, pg_get_userbyid(proowner) AS owner FROM pg_proc
        WHERE prosecdef AND pronamespace = 'public'::regnamespace ORDER BY proname, pronargs`,
    );
    // leave and rejoin in two forms: with a reason (migration 0024) and the one earlier builds call.
    expect(definers.rows.map(({ proname, arguments: n, owner }) => ({ proname, n, owner }))).toEqual(
      [
        ['ingest_signals', 10],
        ['leave_community_layer', 1],
        ['leave_community_layer', 4],
        ['leave_community_layer_many', 4],
        ['rejoin_community_layer', 1],
        ['rejoin_community_layer', 4],
        ['rejoin_community_layer_many', 4],
        ['request_community_purge', 1],
        ['run_community_purge_chunk', 1],
      ].map(([proname, n]) => ({ proname, n, owner: roles.owner })),
    );
  });

  it('serves signals, a leave, a purge, a rejoin, a webhook delivery and fair-share leases', async () => {
    const registered = await ok<{ registerWebhookEndpoint: { endpoint: { id: string } } }>(
      `mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventKinds: [LEFT, REJOINED]) { endpoint { id } } }`,
      { url: hook.url },
    );
    const signal = `mutation ($input: SignalInput!) { signal(input: $input) { forwarded } }`;
    expect(await ok(signal, { input: { userId: '7001', itemId: 'least-1', kind: 'LIKE', context: { cohortIds: ['c1'] } } })).toEqual({
      signal: { forwarded: true },
    });
    expect(await ok(`mutation { leaveCommunityLayer(userId: "7001") { status } }`)).toEqual({ leaveCommunityLayer: { status: 'LEFT' } });
    await ok(`mutation { purgeCommunityContributions(userId: "7001") { purgeId } }`);
    await eventually(
      async () => (await admin.query(`SELECT status FROM community_purge WHERE user_id = 7001`)).rows[0]?.status === 'FINISHED',
    );
    expect((await admin.query(`SELECT count(*)::int AS n FROM contribution WHERE user_id = 7001`)).rows[0].n).toBe(0);
    expect(await ok(`mutation { rejoinCommunityLayer(userId: "7001") { status } }`)).toEqual({
      rejoinCommunityLayer: { status: 'ACTIVE' },
    });
    expect(await ok(signal, { input: { userId: '7001', itemId: 'least-2', kind: 'VIEW' } })).toEqual({ signal: { forwarded: true } });
    const deliveries = `query ($id: UInt64!) { webhookDeliveries(endpointId: $id) { status } }`;
    await eventually(async () => {
      const { webhookDeliveries } = await ok<{ webhookDeliveries: { status: string }[] }>(deliveries, {
        id: registered.registerWebhookEndpoint.endpoint.id,
      });
      return webhookDeliveries.length === 2 && webhookDeliveries.every((delivery) => delivery.status === 'DELIVERED');
    });
    expect(hook.requests).toBeGreaterThanOrEqual(2);
    await eventually(async () => (await admin.query(`SELECT count(*)::int AS n FROM fair_share_bucket`)).rows[0].n > 0);
    expect((await admin.query(`SELECT * FROM verify_community_aggregates(NULL)`)).rows).toEqual([]);
  });

  it('refuses the app role the direct writes: a membership made ACTIVE, a contribution, an aggregate', async () => {
    await ok(`mutation { leaveCommunityLayerMany(userIds: ["7002"]) { changed } rejoinCommunityLayerMany(userIds: ["7066"]) { changed } }`);
    const direct = await sqlClient(roles.url(roles.app));
    try {
      expect(await asCode(direct.query(`UPDATE community_membership SET status = 'ACTIVE', left_at_ns = NULL WHERE user_id = 7002`))).toBe(
        '42501',
      );
      expect(
        await asCode(
          direct.query(
            `INSERT INTO cohort_contribution (signal_id, cohort_id, user_id, item_id, weight_micros, at_ns) VALUES (1, 'c1', 7002, 'x', 1, 1)`,
          ),
        ),
      ).toBe('42501');
      expect(await asCode(direct.query(`UPDATE community_item_aggregate SET signal_count = signal_count + 1`))).toBe('42501');
      expect(await asCode(direct.query(`SELECT count(*) FROM community_membership`))).toBe('done');
    } finally {
      await direct.end();
    }
    expect((await admin.query(`SELECT status FROM community_membership WHERE user_id = 7002`)).rows[0].status).toBe('LEFT');
  });

  it('re-applying a function file, as the change-a-function procedure does, keeps SECURITY DEFINER and the search_path', async () => {
    const owner = await sqlClient(roles.url(roles.owner));
    try {
      await owner.query(await readSqlFile(['leave_community_layer', 5]));
    } finally {
      await owner.end();
    }
    const { rows } = await admin.query(
      `SELECT prosecdef, proconfig, proacl::text[] AS acl FROM pg_proc WHERE proname = 'leave_community_layer'`,
    );
    const kept = { prosecdef: true, proconfig: ['search_path=public, pg_temp'], acl: expect.any(Array) };
    expect(rows).toEqual([kept, kept]);
    expect(rows.flatMap((row) => row.acl).some((entry: string) => entry.startsWith('=X'))).toBe(false);
    expect(await ok(`mutation { leaveCommunityLayer(userId: "7003") { status } }`)).toEqual({ leaveCommunityLayer: { status: 'LEFT' } });
  });

  it('every function and trigger function fixes its search_path, but the two inlined helpers, whose bodies name everything in full', async () => {
    const { rows } = await admin.query(
      `SELECT p.proname AS name, p.proconfig AS config, p.prosrc AS body FROM pg_proc p
         JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY 1`,
    );
    const inlined = ['community_user_bucket', 'community_user_key'];
    expect(rows.length).toBeGreaterThan(inlined.length);
    for (const { name, config, body } of rows) {
      if (inlined.includes(name)) {
        expect({ name, config }).toEqual({ name, config: null });
        expect(body).toMatch(/OPERATOR\(pg_catalog\.[-&]\)/);
      } else {
        expect({ name, config }).toEqual({ name, config: ['search_path=public, pg_temp'] });
      }
    }
  });

  it('a role missing a grant is refused at start in one line naming the privilege and the grant', async () => {
    const refused = await startApp(roles.url(roles.bare), { MIGRATE_ON_START: 'false' }).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(refused).toMatch(
      new RegExp(
        `^database role "${roles.bare}" lacks \\S+ on .+: grant them as the owner with \`npm run migrate -- --grant-to ${roles.bare}\``,
      ),
    );
    expect(refused).not.toContain('\n');
  });
});
