import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Whether a commit this service was told succeeded survives the loss of the primary. */
export interface Durability {
  /** false: an acknowledged leave or signal can be lost on failover. */
  durable: boolean;
  reason: string;
  synchronousCommit: string;
  synchronousStandbyNames: string;
  /** Standbys confirming commits now (sync or quorum); null when this role may not see it. */
  synchronousStandbys: number | null;
  /** Standbys streaming from this primary now, of any kind: none means there is nothing to fail over to. */
  standbys: number;
}

interface Settings {
  synchronous_commit: string;
  synchronous_standby_names: string;
  synchronous: number;
  hidden: number;
  standbys: number;
}

/**
 * Reads what the primary's sessions commit with. A commit is acknowledged before any standby has it
 * when synchronous_commit is off or local, or when no synchronous standby is named; then the commits
 * of the last moments before a failover are gone on the promoted standby.
 */
export async function readDurability(db: Kysely<Database>): Promise<Durability> {
  const { rows } = await sql<Settings>`
    SELECT current_setting('synchronous_commit') AS synchronous_commit,
           current_setting('synchronous_standby_names') AS synchronous_standby_names,
           (SELECT count(*) FILTER (WHERE sync_state IN ('sync', 'quorum')) FROM pg_stat_replication)::int AS synchronous,
           -- Without pg_read_all_stats, other users' replication rows show no state.
           (SELECT count(*) FILTER (WHERE sync_state IS NULL) FROM pg_stat_replication)::int AS hidden,
           (SELECT count(*) FROM pg_stat_replication)::int AS standbys`.execute(db);
  const settings = rows[0]!;
  return {
    ...verdict(settings),
    synchronousCommit: settings.synchronous_commit,
    synchronousStandbyNames: settings.synchronous_standby_names,
    synchronousStandbys: settings.hidden > 0 ? null : settings.synchronous,
    standbys: settings.standbys,
  };
}

function verdict(settings: Settings): Pick<Durability, 'durable' | 'reason'> {
  const commit = settings.synchronous_commit;
  if (commit === 'off' || commit === 'local') {
    return { durable: false, reason: `synchronous_commit=${commit}: a commit is acknowledged before any standby has it` };
  }
  if (settings.synchronous_standby_names.trim() === '') {
    return {
      durable: false,
      reason:
        'synchronous_standby_names is empty: no standby confirms a commit before it is acknowledged (asynchronous replication, or none)',
    };
  }
  if (settings.hidden === 0 && settings.synchronous === 0) {
    return {
      durable: true,
      reason: 'no synchronous standby is connected now: commits wait until one confirms them (none is acknowledged unreplicated)',
    };
  }
  return {
    durable: true,
    reason: `each commit is confirmed by a synchronous standby (synchronous_commit=${commit}) before it is acknowledged`,
  };
}
