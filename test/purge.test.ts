import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { freshDatabase, gql, sqlClient, startApp, startCluster, token } from './support/harness.js';
import {
  expectExact,
  finished,
  leave,
  leftovers,
  PURGE,
  purge,
  RECEIPTS,
  type Receipt,
  receipts,
  send,
  VERIFY,
} from './support/purge-requests.js';

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
