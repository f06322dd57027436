import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { command } from '../tooling/debian-packages.js';
import { migratedTemplate, withDatabase } from '../tooling/databases.js';
import { postgresClient, type PostgresClient } from '../tooling/postgres-client.js';
import type { EmbeddedDatabase } from '../tooling/postgres/embedded.js';
import { OLDEST_MAJOR, startOldestPostgres } from '../tooling/oldest-postgres.js';
import {
  acknowledged,
  DELIVERIES,
  downReceiver,
  finished,
  leave,
  ok,
  purge,
  receipt,
  rejoin,
  send,
  standing,
  STATUS,
  VERIFY,
  WEBHOOKS,
} from './support/backup-fixture.js';
import { eventually, sqlClient, startApp } from './support/harness.js';

/**
 * The backup and restore procedure of docs/operations.md, command for command, on the oldest
 * supported PostgreSQL (15) with Debian's pg_dump and pg_restore of that major.
 */
let server: EmbeddedDatabase;
let client: PostgresClient;
let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'community-layer-backup-'));
  [server, client] = await Promise.all([startOldestPostgres('postgres'), postgresClient(OLDEST_MAJOR)]);
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await rm(folder, { recursive: true, force: true });
});

const run = (program: string, args: string[]) => command(program, args, { env: client.env });
const USERS = ['8001', '8002', '8003'];
/** Whose purges are over by the dump: their receipts come back unchanged (8003's runs on). */
const SETTLED = ['8001', '8002'];

async function scalar(url: string, sql: string): Promise<unknown> {
  const db = await sqlClient(url);
  try {
    return (await db.query(sql)).rows[0].value;
  } finally {
    await db.end();
  }
}

describe(`backup and restore on PostgreSQL ${OLDEST_MAJOR}`, () => {
  const dump = () => path.join(folder, 'community.dump');

  it('a pg_dump of a live database restores into a new one that serves the same statuses, receipts, aggregates and deliveries', async () => {
    expect(await scalar(server.url, `SELECT current_setting('server_version_num')::int / 10000 AS value`)).toBe(OLDEST_MAJOR);
    const source = withDatabase(server.url, 'backup_source');
    await migratedTemplate(server.url, 'backup_source');
    const receiver = await downReceiver();
    const first = await startApp(source, WEBHOOKS);
    let second: App | undefined;
    let restoredApp: App | undefined;
    try {
      const endpoint = await ok<{ registerWebhookEndpoint: { endpoint: { id: string } } }>(
        first,
        `mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventKinds: [LEFT, REJOINED]) { endpoint { id } } }`,
        { url: receiver.url },
      );
      const endpointId = endpoint.registerWebhookEndpoint.endpoint.id;
      await ok(first, `mutation { registerDownstreamProcessor(subject: "warehouse-etl", name: "Warehouse") { id } }`);
      for (const userId of USERS) await send(first, userId, 6);
      // 8001 leaves, rejoins, leaves; its purge finishes and is acknowledged. 8002 leaves.
      await leave(first, '8001');
      await rejoin(first, '8001');
      await send(first, '8001', 3);
      await leave(first, '8001');
      await acknowledged(first, 'warehouse-etl', await purge(first, '8001'));
      await finished(first, '8001');
      await leave(first, '8002');
      // 8003's purge is in flight at the dump: one signal per chunk, a minute between chunks.
      second = await startApp(source, { ...WEBHOOKS, PURGE_CHUNK_SIZE: '1', PURGE_CHUNK_PAUSE_MS: '60000' });
      await first.stop();
      await leave(second, '8003');
      await purge(second, '8003');
      let inFlight = { status: '', removedSoFar: 0 };
      await eventually(async () => ([inFlight = inFlight] = await receipt(second!, '8003')) && inFlight.removedSoFar > 0);
      expect(inFlight.status).toBe('RUNNING');
      await eventually(async () => (await ok(second!, DELIVERIES, { id: endpointId })).webhookDeliveries.length > 0);
      const before = [await standing(second, SETTLED), await ok(second, STATUS, { userId: '8003' })];

      // The procedure: a custom-format dump of the live database, restored into a new, empty one.
      await run(client.pgDump, ['--format=custom', `--file=${dump()}`, `--dbname=${source}`]);
      await second.stop();
      await run(client.createdb, [`--maintenance-db=${server.url}`, 'community_restored']);
      const restored = withDatabase(server.url, 'community_restored');
      await run(client.pgRestore, ['--exit-on-error', '--single-transaction', `--dbname=${restored}`, dump()]);
      expect(await scalar(restored, `SELECT count(*)::int AS value FROM webhook_delivery WHERE status = 'PENDING'`)).toBeGreaterThan(0);
      expect(await scalar(restored, `SELECT count(*)::int AS value FROM graphile_worker.jobs`)).toBeGreaterThan(0);

      restoredApp = await startApp(restored, WEBHOOKS);
      const after = [await standing(restoredApp, SETTLED), await ok(restoredApp, STATUS, { userId: '8003' })];
      // The purge in flight resumed from its cursor; everything else is as it was.
      await finished(restoredApp, '8003');
      expect(after).toEqual(before);
      expect((await ok(restoredApp, VERIFY)).verifyCommunityAggregates).toEqual({ consistent: true, mismatches: [] });
      expect((await receipt(restoredApp, '8003'))[0]!.removedSoFar).toBeGreaterThan(inFlight.removedSoFar);
      // The queued deliveries go out once the receiver is up, and new changes are delivered too.
      receiver.state.up = true;
      await rejoin(restoredApp, '8002');
      const delivered = async () => (await ok(restoredApp!, DELIVERIES, { id: endpointId })).webhookDeliveries;
      await eventually(async () => (await delivered()).every((delivery: { status: string }) => delivery.status === 'DELIVERED'), 30_000);
      const messageIds = (await delivered()).map((delivery: { messageId: string }) => delivery.messageId);
      expect(messageIds.every((id: string) => receiver.ids.has(id))).toBe(true);
      expect(await scalar(restored, `SELECT count(*)::int AS value FROM webhook_delivery WHERE status = 'DELIVERED'`)).toBe(
        messageIds.length,
      );
    } finally {
      await Promise.all([first.stop(), second?.stop(), restoredApp?.stop()]);
      await receiver.close();
    }
  }, 90_000);

  it('a data-only restore into a migrated database is refused and writes nothing', async () => {
    await migratedTemplate(server.url, 'data_only');
    const target = withDatabase(server.url, 'data_only');
    const count = `SELECT count(*)::int AS value FROM community_membership`;
    const refused = run(client.pgRestore, ['--data-only', '--exit-on-error', '--single-transaction', `--dbname=${target}`, dump()]);
    // Whichever comes first: rows the migrations wrote (their bookkeeping, the counters), the guard triggers.
    await expect(refused).rejects.toThrow(/pg_restore: error: (COPY failed for table|could not execute query)/);
    expect(await scalar(target, count)).toBe(0);
  });
});
