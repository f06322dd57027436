import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { aggregateMismatches } from '../tooling/invariants.js';
import { lockCohortEntry } from './support/cohort-entry-lock.js';
import { eventually, freshDatabase, sqlClient, startApp, startServer } from './support/harness.js';
import { expectExact, finished, leave, leftovers, purge, send } from './support/purge-requests.js';

/** A purge survives its process: a chunk in flight when the process is killed leaves nothing, and another instance finishes exact. */

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
      await lockCohortEntry(blocker, '351', 1201);
      const blockerPid = (await blocker.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const requested = await purge(remote, '351');
      expect(requested.errors).toBeUndefined();
      const purgeId = requested.data!.purgeCommunityContributions.purgeId;
      let chunkBackend = 0;
      await eventually(async () => {
        // Waiting on the blocker, not on any lock (a moment's wait to extend a table would pass too).
        const { rows } = await db.query(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND $1 = ANY (pg_blocking_pids(pid)) AND query LIKE '%run_community_purge_chunk%'`,
          [blockerPid],
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
