import { sql, type Kysely } from 'kysely';
import type { Compatibility } from './compatibility.js';
import { applySqlFiles } from './sql-files.js';

/** contract: The first migration: no build runs without it (and its down() drops everything). */
export const compatibility: Compatibility = 'contract';

/**
 * Membership: who left the community layer, when, and every leave in history.
 *
 * Writers serialize per user on a transaction-scoped advisory lock (two int4 halves of the u64, a
 * key space separate from the single-bigint one other tools use). The boundary is stamped only
 * after that lock is held, so a leave orders exactly against in-flight signal fan-out
 * (see 0002_signals). Leave/rejoin are SQL functions because their read of the current state must
 * run in a statement that starts after the lock was granted (READ COMMITTED takes a snapshot per
 * statement), and a function does that in one round trip.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE DOMAIN u64 AS numeric(20, 0)
      CHECK (VALUE >= 0 AND VALUE <= 18446744073709551615);

    CREATE TYPE membership_status AS ENUM ('ACTIVE', 'LEFT');
  `.execute(db);
  await applySqlFiles(db, [
    ['now_ns', 1],
    ['community_user_key', 1],
    ['community_user_lock_hi', 1],
    ['community_user_lock_lo', 1],
  ]);
  await sql`
    -- One row; every membership write bumps it under its row lock, so versions are handed out in
    -- commit order. A cache that has applied version V has seen every change up to V, which makes
    -- "resync rows whose version is above the highest seen" exact.
    CREATE TABLE membership_clock (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      version bigint NOT NULL
    );
    INSERT INTO membership_clock (version) VALUES (0);

    CREATE TABLE community_membership (
      user_id u64 PRIMARY KEY,
      status membership_status NOT NULL,
      left_at_ns bigint,
      rejoined_at_ns bigint,
      version bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT left_at_ns_iff_left CHECK ((status = 'LEFT') = (left_at_ns IS NOT NULL))
    );
    CREATE INDEX community_membership_version_idx ON community_membership (version);

    CREATE TABLE leave_episode (
      user_id u64 NOT NULL REFERENCES community_membership (user_id) ON DELETE CASCADE,
      left_at_ns bigint NOT NULL,
      rejoined_at_ns bigint,
      PRIMARY KEY (user_id, left_at_ns),
      CONSTRAINT episode_window CHECK (rejoined_at_ns IS NULL OR rejoined_at_ns > left_at_ns)
    );
    CREATE UNIQUE INDEX leave_episode_one_open_idx ON leave_episode (user_id) WHERE rejoined_at_ns IS NULL;
  `.execute(db);
  await applySqlFiles(db, [
    ['membership_next_version', 1],
    ['community_membership_stamp', 1],
    ['community_membership_notify', 1],
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE leave_episode;
    DROP TABLE community_membership;
    DROP TABLE membership_clock;
    DROP FUNCTION community_membership_notify, community_membership_stamp, membership_next_version,
      community_user_lock_hi, community_user_lock_lo, community_user_key, now_ns;
    DROP TYPE membership_status;
    DROP DOMAIN u64;
  `.execute(db);
}
