import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, freshDatabase, gql, sqlClient, startApp, startCluster, startServer, token, type Cluster } from './support/harness.js';
import { aggregateMismatches } from '../tooling/invariants.js';

const SIGNALS = `mutation Send($inputs: [SignalInput!]!) { signals(inputs: $inputs) { forwarded } }`;
const PURGE = `mutation Purge($userId: UInt64) {
  purgeCommunityContributions(userId: $userId) { purgeId status boundaryNs removedSoFar foundNothing }
}`;
const RECEIPTS = `query Receipts($userId: UInt64) {
  communityPurges(userId: $userId) {
    purgeId status boundaryNs fromNs requestedAt finishedAt removedSoFar weightRemoved chunks foundNothing
    targets { target cohortId entries weight }
  }
}`;
const VERIFY = `query { verifyCommunityAggregates { consistent mismatches { target itemId ledgerCount aggregateCount } } }`;

interface Receipt {
  purgeId: string;
  status: 'RUNNING' | 'FINISHED';
  boundaryNs: string;
  fromNs: string;
  finishedAt: string | null;
  removedSoFar: number;
  weightRemoved: number;
  chunks: number;
  foundNothing: boolean;
  targets: { target: string; cohortId: string | null; entries: number; weight: number }[];
}

/** `count` signals of `userId` over items purge-0…purge-4, each attributed to `cohorts`; weights 1…7. */
async function send(app: App, userId: string, count: number, cohorts: string[] = ['north', 'south'], offset = 0): Promise<void> {
  for (let start = 0; start < count; start += 200) {
    const inputs = Array.from({ length: Math.min(200, count - start) }, (_, i) => ({
      userId,
      itemId: `purge-${(offset + start + i) % 5}`,
      kind: 'LIKE',
      weight: ((offset + start + i) % 7) + 1,
      context: { cohortIds: cohorts },
    }));
    const response = await gql(app, SIGNALS, { inputs });
    expect(response.errors).toBeUndefined();
  }
}

async function leave(app: App, userId: string): Promise<void> {
  expect((await gql(app, `mutation { leaveCommunityLayer(userId: "${userId}") { status } }`)).errors).toBeUndefined();
}

async function purge(app: App, userId: string) {
  return gql<{ purgeCommunityContributions: Receipt }>(app, PURGE, { userId });
}

async function receipts(app: App, userId: string): Promise<Receipt[]> {
  const response = await gql<{ communityPurges: Receipt[] }>(app, RECEIPTS, { userId });
  expect(response.errors).toBeUndefined();
  return response.data!.communityPurges;
}

async function finished(app: App, userId: string, timeoutMs = 30_000): Promise<Receipt> {
  let newest: Receipt | undefined;
  await eventually(async () => {
    [newest] = await receipts(app, userId);
    return newest?.status === 'FINISHED';
  }, timeoutMs);
  return newest!;
}

async function expectExact(app: App, db: Cluster['db']): Promise<void> {
  const verified = await gql(app, VERIFY);
  expect(verified.data?.verifyCommunityAggregates).toEqual({ consistent: true, mismatches: [] });
  expect(await aggregateMismatches(db)).toEqual([]);
}

/** Ledger entries of the user below the boundary, and the user's own signals. */
async function leftovers(db: Cluster['db'], userId: string, boundaryNs: string): Promise<{ ledger: number; signals: number }> {
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM contribution WHERE user_id = $1 AND at_ns < $2)::int AS ledger,
            (SELECT count(*) FROM signal WHERE user_id = $1)::int AS signals`,
    [userId, boundaryNs],
  );
  return rows[0];
}

describe('purgeCommunityContributions', () => {
  it('is FORBIDDEN for another user, NOT_LEFT for an ACTIVE user, and writes nothing then', async () => {
    const cluster = await startCluster();
    try {
      const [app] = cluster.apps as [App];
      await send(app, '301', 3);
      const other = await gql(app, PURGE, { userId: '301' }, await token('302'));
      expect(other.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      const active = await gql(app, PURGE, {}, await token('301'));
      expect(active.errors?.[0]?.extensions?.code).toBe('NOT_LEFT');
      expect(active.errors?.[0]?.message).toMatch(/leave the community layer first/);
      const { rows } = await cluster.db.query('SELECT count(*)::int AS n FROM community_purge');
      expect(rows[0].n).toBe(0);
      expect((await leftovers(cluster.db, '301', '9223372036854775807')).ledger).toBe(9);
      const noAdmin = await gql(app, VERIFY, undefined, await token('301'));
      expect(noAdmin.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    } finally {
      await cluster.stop();
    }
  });

  it('removes exactly the user’s entries while other users keep sending to the same items and cohorts', async () => {
    const databaseUrl = await freshDatabase();
    const app = await startApp(databaseUrl, { PURGE_CHUNK_SIZE: '7' });
    const db = await sqlClient(databaseUrl);
    try {
      await send(app, '311', 300);
      await send(app, '312', 50);
      await leave(app, '311');
      const bearer = await token('311');
      const requested = await purge(app, '311');
      expect(requested.errors).toBeUndefined();
      let others = 0;
      let running = true;
      const traffic = (async () => {
        for (let round = 0; running || round < 3; round++) {
          await send(app, round % 2 ? '313' : '312', 10, ['north', 'south'], round);
          others += 10;
        }
      })();
      const receipt = await finished(app, '311');
      running = false;
      await traffic;

      expect(receipt.purgeId).toBe(requested.data!.purgeCommunityContributions.purgeId);
      expect(receipt.removedSoFar).toBe(900);
      expect(receipt.chunks).toBe(Math.ceil(300 / 7));
      expect(receipt.targets.map((t) => [t.target, t.entries])).toEqual([
        ['community', 300],
        ['north', 300],
        ['south', 300],
      ]);
      const weight = Array.from({ length: 300 }, (_, i) => (i % 7) + 1).reduce((a, b) => a + b, 0);
      expect(receipt.targets[0]!.weight).toBe(weight);
      expect(receipt.weightRemoved).toBe(3 * weight);
      expect(receipt.finishedAt).not.toBeNull();
      expect(await leftovers(db, '311', receipt.boundaryNs)).toEqual({ ledger: 0, signals: 300 });
      await expectExact(app, db);
      // Only the other users' entries are left in the aggregates.
      const { rows } = await db.query(`SELECT sum(signal_count)::int AS n FROM community_item_aggregate`);
      expect(rows[0].n).toBe(50 + others);
      // The user reads their own receipt.
      const own = await gql<{ communityPurges: Receipt[] }>(app, RECEIPTS, {}, bearer);
      expect(own.data?.communityPurges[0]?.purgeId).toBe(receipt.purgeId);
    } finally {
      await db.end();
      await app.stop();
    }
  });

  it('two purges of one user at once: one receipt, one does the work', async () => {
    const cluster = await startCluster([{}, {}]);
    try {
      const [a, b] = cluster.apps as [App, App];
      await send(a, '321', 40);
      await leave(a, '321');
      const [first, second] = await Promise.all([purge(a, '321'), purge(b, '321')]);
      expect(first.errors).toBeUndefined();
      expect(second.errors).toBeUndefined();
      await finished(a, '321');
      // Usually the second request finds the first running and returns it; if the first had already
      // finished, the second found nothing. Either way one purge did all the work.
      const all = await receipts(a, '321');
      const ids = new Set([first.data!.purgeCommunityContributions.purgeId, second.data!.purgeCommunityContributions.purgeId]);
      expect(all.map((r) => r.purgeId).sort()).toEqual([...ids].sort());
      const working = all.filter((r) => r.removedSoFar > 0);
      expect(working.map((r) => [r.removedSoFar, r.status])).toEqual([[120, 'FINISHED']]);
      expect(all.filter((r) => r !== working[0]).every((r) => r.foundNothing)).toBe(true);
      await expectExact(a, cluster.db);
    } finally {
      await cluster.stop();
    }
  });

  it('purge, rejoin, more signals, leave, purge again: only the new entries go; a purge with nothing left says so', async () => {
    const cluster = await startCluster();
    try {
      const [app] = cluster.apps as [App];
      await send(app, '331', 20);
      await leave(app, '331');
      await purge(app, '331');
      const first = await finished(app, '331');
      expect(first.removedSoFar).toBe(60);
      expect(first.fromNs).toBe('0');

      const again = await purge(app, '331');
      expect(again.errors).toBeUndefined();
      const nothing = await finished(app, '331');
      expect(nothing.purgeId).not.toBe(first.purgeId);
      expect(nothing).toMatchObject({ removedSoFar: 0, foundNothing: true, targets: [] });

      expect((await gql(app, `mutation { rejoinCommunityLayer(userId: "331") { status } }`)).errors).toBeUndefined();
      await send(app, '331', 8, ['east']);
      await leave(app, '331');
      await purge(app, '331');
      const second = await finished(app, '331');
      expect(second.fromNs).toBe(first.boundaryNs);
      expect(BigInt(second.boundaryNs)).toBeGreaterThan(BigInt(first.boundaryNs));
      expect(second.removedSoFar).toBe(16);
      expect(second.targets.map((t) => [t.target, t.entries])).toEqual([
        ['community', 8],
        ['east', 8],
      ]);
      expect(await leftovers(cluster.db, '331', second.boundaryNs)).toEqual({ ledger: 0, signals: 28 });
      expect((await receipts(app, '331')).map((r) => r.removedSoFar)).toEqual([16, 0, 60]);
      await expectExact(app, cluster.db);
    } finally {
      await cluster.stop();
    }
  });

  it('a rejoin while a purge runs is refused with PURGE_IN_PROGRESS, a leave is not; another instance resumes the purge after a stop', async () => {
    const databaseUrl = await freshDatabase();
    // One signal per chunk and a long pause: the purge is still running when the rejoin comes.
    const slow = await startApp(databaseUrl, { PURGE_CHUNK_SIZE: '1', PURGE_CHUNK_PAUSE_MS: '60000' });
    const db = await sqlClient(databaseUrl);
    let resumer: App | undefined;
    try {
      await send(slow, '341', 4);
      await leave(slow, '341');
      expect((await purge(slow, '341')).data?.purgeCommunityContributions.status).toBe('RUNNING');
      const rejoin = await gql(slow, `mutation { rejoinCommunityLayer(userId: "341") { status } }`, undefined, await token('341'));
      expect(rejoin.errors?.[0]?.extensions?.code).toBe('PURGE_IN_PROGRESS');
      expect((await gql(slow, `mutation { leaveCommunityLayer(userId: "341") { status } }`)).data?.leaveCommunityLayer.status).toBe('LEFT');
      const { rows } = await db.query(`SELECT status FROM community_membership WHERE user_id = 341`);
      expect(rows[0].status).toBe('LEFT');
      await slow.stop();

      resumer = await startApp(databaseUrl, { PURGE_POLL_MS: '50' });
      const receipt = await finished(resumer, '341');
      expect(receipt.removedSoFar).toBe(12);
      expect((await gql(resumer, `mutation { rejoinCommunityLayer(userId: "341") { status } }`)).data?.rejoinCommunityLayer.status).toBe(
        'ACTIVE',
      );
      await expectExact(resumer, db);
    } finally {
      await db.end();
      await resumer?.stop();
    }
  });
});

describe('purge after SIGKILL', () => {
  it('rolls back the chunk in flight when its process dies; a new instance resumes: exact, every entry removed once', async () => {
    const databaseUrl = await freshDatabase();
    const server = await startServer(databaseUrl, { PURGE_CHUNK_SIZE: '20' });
    const db = await sqlClient(databaseUrl);
    const blocker = await sqlClient(databaseUrl);
    let app: App | undefined;
    try {
      const remote = { url: server.url } as App;
      await send(remote, '351', 2000);
      await send(remote, '352', 100);
      await leave(remote, '351');
      // Chunk 31 (signals 601…620) deletes signal 601's "north" entry, then waits for this lock on
      // its "south" entry: the process dies with a chunk half done, not between chunks.
      const { rows: keys } = await db.query(
        `SELECT at_ns, signal_id FROM cohort_contribution WHERE user_id = 351 ORDER BY at_ns, signal_id, cohort_id OFFSET 1201 LIMIT 1`,
      );
      await blocker.query('BEGIN');
      await blocker.query(
        `SELECT 1 FROM cohort_contribution WHERE user_id = 351 AND at_ns = $1 AND signal_id = $2 AND cohort_id = 'south' FOR UPDATE`,
        [keys[0].at_ns, keys[0].signal_id],
      );
      const requested = await purge(remote, '351');
      expect(requested.errors).toBeUndefined();
      const purgeId = requested.data!.purgeCommunityContributions.purgeId;
      let chunkBackend = 0;
      await eventually(async () => {
        const { rows } = await db.query(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%run_community_purge_chunk%'`,
        );
        chunkBackend = rows[0]?.pid ?? 0;
        return chunkBackend !== 0;
      }, 30_000);
      await server.stop('SIGKILL');
      // PostgreSQL ends the dead client's session (here at once; by itself once TCP keepalive or
      // client_connection_check_interval notices), which rolls the chunk's transaction back.
      await db.query('SELECT pg_terminate_backend($1)', [chunkBackend]);
      await eventually(
        async () => (await db.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [chunkBackend])).rows.length === 0,
        30_000,
      );
      await blocker.query('ROLLBACK');

      const { rows: killed } = await db.query(`SELECT status, removed_so_far::int AS n, chunks FROM community_purge WHERE id = $1`, [
        purgeId,
      ]);
      expect(killed[0]).toEqual({ status: 'RUNNING', n: 30 * 60, chunks: 30 });
      // The half-done chunk left nothing: signal 601's "north" entry is back.
      const { rows: entries } = await db.query(`SELECT count(*)::int AS n FROM cohort_contribution WHERE user_id = 351`);
      expect(entries[0].n).toBe((2000 - 600) * 2);
      expect(await aggregateMismatches(db)).toEqual([]);

      app = await startApp(databaseUrl, { PURGE_CHUNK_SIZE: '20', PURGE_POLL_MS: '50' });
      const receipt = await finished(app, '351', 60_000);
      expect(receipt.purgeId).toBe(purgeId);
      expect(receipt.removedSoFar).toBe(6000);
      // 2000 signals in chunks of 20: exactly 100 chunks committed across both processes.
      expect(receipt.chunks).toBe(100);
      expect(receipt.targets.map((t) => [t.target, t.entries])).toEqual([
        ['community', 2000],
        ['north', 2000],
        ['south', 2000],
      ]);
      expect(await leftovers(db, '351', receipt.boundaryNs)).toEqual({ ledger: 0, signals: 2000 });
      await expectExact(app, db);
      const { rows } = await db.query(`SELECT sum(signal_count)::int AS n FROM community_item_aggregate`);
      expect(rows[0].n).toBe(100);
    } finally {
      await server.stop('SIGKILL');
      await blocker.end();
      await db.end();
      await app?.stop();
    }
  });
});
