-- version: 7
-- Stores a whole group of signals in one statement and fans out the forwardable ones.
--
-- p_gate_open[i] is the in-memory gate's answer (false: the cache knows the user LEFT, so no lock
-- and no fan-out). Cohorts come flattened as (p_cohort_ords[j], p_cohort_ids[j]) with 1-based
-- signal ordinals, already deduplicated.
--
-- Shared advisory locks are taken, in order, on the lock buckets of every user the gate let
-- through (leave and rejoin take their user's bucket exclusively). at_ns is stamped after the locks are granted and the status is
-- read in a later statement, whose READ COMMITTED snapshot includes any leave that committed while
-- this call waited: a group that won the lock stamps before the leave's boundary, a group that got
-- it after the leave sees LEFT and forwards nothing.
--
-- A signal is stamped at or above its user's fence: the membership row's left_at_ns and
-- rejoined_at_ns or, for a user without a row (erased while ACTIVE), the last rejoin in the leave
-- history. So a signal after a rejoin is never below the boundary of an earlier purge, even with a
-- clock stepped back past it: a purge's watermark (migration 0015) covers no later contribution.
-- The history is looked up per signal only while the clock is not past everyone's newest rejoin
-- (one index probe per call; read after the locks, so no rejoin of a locked user is missed).
--
-- Event ids (p_event_ids[i], NULL for none) make a signal idempotent per user. Almost every group
-- holds none already stored, so it is first written with a plain insert: signal_user_event_idx
-- checks each key as it inserts it, where ON CONFLICT would probe the index first and insert each
-- row speculatively (a token lock and one more WAL record per row: it cost as much as the index
-- itself, docs/performance.md). A duplicate (stored, in flight in another transaction and then
-- committed, or repeated within the group) makes that insert fail: the block's subtransaction rolls
-- back every row of it, and the same statement runs once more with v_skip_duplicates set, so that
-- its other insert runs, which skips a stored (user_id, event_id) (ON CONFLICT DO NOTHING on
-- signal_user_event_idx). Only rows actually inserted reach the ledger and the aggregates. A
-- skipped signal is answered with the stored one's outcome and r_duplicate: the original decision
-- stands, a duplicate never re-enters the gate. Rows go in by key, then input order, so within one
-- call the first occurrence wins, and two groups wait for each other's keys in one order and never
-- deadlock on them. A key that another transaction inserted and has not committed makes the insert
-- wait for it; its row is then visible only to a later statement, hence the second lookup below
-- (run only when something was skipped).
CREATE OR REPLACE FUNCTION ingest_signals(
  p_user_ids text[], p_item_ids text[], p_kinds signal_kind[], p_weights bigint[],
  p_occurred_at timestamptz[], p_surfaces text[], p_gate_open boolean[],
  p_cohort_ords int[], p_cohort_ids text[], p_event_ids text[]
) RETURNS TABLE (r_signal_id bigint, r_forwarded boolean, r_cohorts_attributed int, r_duplicate boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_now bigint;
  v_shard int2 := (pg_backend_pid() % 32)::int2;
  v_newest_rejoin bigint;
  -- Set after the plain insert met a duplicate: the statement runs again, skipping duplicates.
  v_skip_duplicates boolean := false;
  -- Per input ordinal; NULL where the signal was skipped as a duplicate.
  v_ids bigint[];
  v_forwarded boolean[];
  v_cohorts int[];
BEGIN
  PERFORM require_read_committed();
  -- All the shared locks in one statement, in bucket order (lock_community_buckets takes one
  -- statement per bucket: up to 64 per group). Same lock class as lock_community_buckets.sql.
  -- Taken outside the block below, so its rollback keeps them.
  PERFORM pg_advisory_xact_lock_shared(1129073004, b.bucket)
     FROM (SELECT DISTINCT community_user_bucket(g.u::u64) AS bucket
             FROM unnest(p_user_ids, p_gate_open) AS g(u, open)
            WHERE g.open
            ORDER BY 1) AS b;
  v_now := now_ns();
  v_newest_rejoin := (SELECT max(e.rejoined_at_ns) FROM leave_episode e);
  LOOP
    BEGIN
      WITH input AS (
        SELECT t.ord::int AS ord, t.u::u64 AS user_id, t.item, t.kind, t.w, t.occ, t.surface, t.open, t.event_id COLLATE "C" AS event_id
          FROM unnest(p_user_ids, p_item_ids, p_kinds, p_weights, p_occurred_at, p_surfaces, p_gate_open, p_event_ids)
               WITH ORDINALITY AS t(u, item, kind, w, occ, surface, open, event_id, ord)
      ), cohort_lists AS (
        SELECT c.ord, array_agg(c.cohort) AS cohorts FROM unnest(p_cohort_ords, p_cohort_ids) AS c(ord, cohort) GROUP BY c.ord
      ), decided AS (
        SELECT i.*, nextval('signal_id_seq') AS id,
               (i.open AND m.status IS DISTINCT FROM 'LEFT') AS fwd,
               greatest(v_now, m.left_at_ns, m.rejoined_at_ns, CASE WHEN m.user_id IS NULL AND v_now < v_newest_rejoin THEN
                 (SELECT max(e.rejoined_at_ns) FROM leave_episode e WHERE e.user_id = i.user_id) END) AS at_ns
          FROM input i LEFT JOIN community_membership m ON m.user_id = i.user_id
      ), signal_rows AS (
        SELECT d.ord, d.id, d.user_id, d.item, d.kind, d.w, d.occ, d.surface, coalesce(cl.cohorts, '{}') AS cohorts, d.at_ns, d.fwd, d.event_id
          FROM decided d LEFT JOIN cohort_lists cl ON cl.ord = d.ord
      ), inserted AS (
        -- One of these two inserts runs; the other's filter is false before it reads a row.
        INSERT INTO signal (id, user_id, item_id, kind, weight_micros, occurred_at, surface, cohort_ids, at_ns, forwarded, event_id)
        SELECT r.id, r.user_id, r.item, r.kind, r.w, r.occ, r.surface, r.cohorts, r.at_ns, r.fwd, r.event_id
          FROM signal_rows r WHERE NOT v_skip_duplicates ORDER BY r.user_id, r.event_id, r.ord
        RETURNING id, user_id, item_id, weight_micros, cohort_ids, at_ns, forwarded
      ), inserted_skipping_duplicates AS (
        INSERT INTO signal (id, user_id, item_id, kind, weight_micros, occurred_at, surface, cohort_ids, at_ns, forwarded, event_id)
        SELECT r.id, r.user_id, r.item, r.kind, r.w, r.occ, r.surface, r.cohorts, r.at_ns, r.fwd, r.event_id
          FROM signal_rows r WHERE v_skip_duplicates ORDER BY r.user_id, r.event_id, r.ord
        ON CONFLICT (user_id, event_id) WHERE event_id IS NOT NULL DO NOTHING
        RETURNING id, user_id, item_id, weight_micros, cohort_ids, at_ns, forwarded
      ), stored AS (
        SELECT * FROM inserted UNION ALL SELECT * FROM inserted_skipping_duplicates
      ), attributed AS (
        SELECT s.id, s.user_id, s.item_id, s.weight_micros AS w, s.at_ns, c.cohort
          FROM stored s CROSS JOIN LATERAL unnest(s.cohort_ids) AS c(cohort)
         WHERE s.forwarded
      ), cohort_ledger AS (
        INSERT INTO cohort_contribution (signal_id, cohort_id, user_id, item_id, weight_micros, at_ns)
        SELECT a.id, a.cohort, a.user_id, a.item_id, a.w, a.at_ns FROM attributed a
      ), community AS (
        INSERT INTO community_item_aggregate AS agg (item_id, shard, signal_count, weight_micros_sum)
        SELECT s.item_id, v_shard, count(*), sum(s.weight_micros) FROM stored s WHERE s.forwarded GROUP BY s.item_id ORDER BY s.item_id
        ON CONFLICT (item_id, shard) DO UPDATE
          SET signal_count = agg.signal_count + excluded.signal_count,
              weight_micros_sum = agg.weight_micros_sum + excluded.weight_micros_sum
      ), cohort AS (
        INSERT INTO cohort_item_aggregate AS agg (cohort_id, item_id, shard, signal_count, weight_micros_sum)
        SELECT a.cohort, a.item_id, v_shard, count(*), sum(a.w) FROM attributed a
         GROUP BY a.cohort, a.item_id ORDER BY a.cohort, a.item_id
        ON CONFLICT (cohort_id, item_id, shard) DO UPDATE
          SET signal_count = agg.signal_count + excluded.signal_count,
              weight_micros_sum = agg.weight_micros_sum + excluded.weight_micros_sum
      )
      SELECT array_agg(s.id ORDER BY d.ord),
             array_agg(s.forwarded ORDER BY d.ord),
             array_agg(CASE WHEN s.forwarded THEN cardinality(s.cohort_ids) WHEN s.id IS NOT NULL THEN 0 END ORDER BY d.ord)
        INTO v_ids, v_forwarded, v_cohorts
        FROM decided d LEFT JOIN stored s ON s.id = d.id;
      EXIT;
    EXCEPTION WHEN unique_violation THEN
      -- Skipping duplicates, the insert meets none: this violation is another constraint's.
      IF v_skip_duplicates THEN RAISE; END IF;
      v_skip_duplicates := true;
    END;
  END LOOP;
  -- Outside the block: the answer is returned only once every write of the statement is done.
  IF array_position(v_ids, NULL) IS NULL THEN
    RETURN QUERY
    SELECT r.id, r.fwd, r.n, false
      FROM unnest(v_ids, v_forwarded, v_cohorts) WITH ORDINALITY AS r(id, fwd, n, ord)
     ORDER BY r.ord;
  ELSE
    -- A later statement: its snapshot includes the rows of any transaction the insert waited for.
    RETURN QUERY
    SELECT coalesce(r.id, o.id), coalesce(r.fwd, o.forwarded),
           coalesce(r.n, CASE WHEN o.forwarded THEN cardinality(o.cohort_ids) ELSE 0 END), r.id IS NULL
      FROM unnest(v_ids, v_forwarded, v_cohorts, p_user_ids, p_event_ids) WITH ORDINALITY AS r(id, fwd, n, u, event_id, ord)
      LEFT JOIN LATERAL (
        SELECT s.id, s.forwarded, s.cohort_ids FROM signal s
         WHERE r.id IS NULL AND s.user_id = r.u::u64 AND s.event_id = r.event_id
      ) AS o ON true
     ORDER BY r.ord;
  END IF;
END
$$;
