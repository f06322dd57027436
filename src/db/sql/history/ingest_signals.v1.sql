-- version: 1
-- Stores a whole group of signals in one statement and fans out the forwardable ones.
--
-- p_gate_open[i] is the in-memory gate's answer (false: the cache knows the user LEFT, so no lock
-- and no fan-out). Cohorts come flattened as (p_cohort_ords[j], p_cohort_ids[j]) with 1-based
-- signal ordinals, already deduplicated.
--
-- Shared advisory locks are taken in key order for every user the gate let through (leave and
-- rejoin take them exclusively). at_ns is stamped after the locks are granted and the status is
-- read in a later statement, whose READ COMMITTED snapshot includes any leave that committed while
-- this call waited: a group that won the lock stamps before the leave's boundary, a group that got
-- it after the leave sees LEFT and forwards nothing.
CREATE OR REPLACE FUNCTION ingest_signals(
  p_user_ids text[], p_item_ids text[], p_kinds signal_kind[], p_weights bigint[],
  p_occurred_at timestamptz[], p_surfaces text[], p_gate_open boolean[],
  p_cohort_ords int[], p_cohort_ids text[]
) RETURNS TABLE (r_signal_id bigint, r_forwarded boolean, r_cohorts_attributed int)
LANGUAGE plpgsql AS $$
DECLARE
  v_now bigint;
  v_shard int2 := (pg_backend_pid() % 32)::int2;
BEGIN
  PERFORM require_read_committed();
  PERFORM pg_advisory_xact_lock_shared(community_user_lock_hi(k.key), community_user_lock_lo(k.key))
     FROM (SELECT DISTINCT community_user_key(g.u::u64) AS key
             FROM unnest(p_user_ids, p_gate_open) AS g(u, open)
            WHERE g.open
            ORDER BY 1) AS k;
  v_now := now_ns();
  RETURN QUERY
  WITH input AS (
    SELECT t.ord::int AS ord, t.u::u64 AS user_id, t.item, t.kind, t.w, t.occ, t.surface, t.open
      FROM unnest(p_user_ids, p_item_ids, p_kinds, p_weights, p_occurred_at, p_surfaces, p_gate_open)
           WITH ORDINALITY AS t(u, item, kind, w, occ, surface, open, ord)
  ), requested_cohorts AS (
    SELECT c.ord, c.cohort FROM unnest(p_cohort_ords, p_cohort_ids) AS c(ord, cohort)
  ), cohort_lists AS (
    SELECT rc.ord, array_agg(rc.cohort) AS cohorts FROM requested_cohorts rc GROUP BY rc.ord
  ), decided AS (
    SELECT i.*, nextval('signal_id_seq') AS id,
           (i.open AND m.status IS DISTINCT FROM 'LEFT') AS fwd,
           greatest(v_now, m.left_at_ns, m.rejoined_at_ns) AS at_ns
      FROM input i LEFT JOIN community_membership m ON m.user_id = i.user_id
  ), attributed AS (
    SELECT d.id, d.user_id, d.item, d.w, d.at_ns, rc.cohort
      FROM requested_cohorts rc JOIN decided d ON d.ord = rc.ord
     WHERE d.fwd
  ), attributed_counts AS (
    SELECT a.id, count(*)::int AS n FROM attributed a GROUP BY a.id
  ), stored AS (
    INSERT INTO signal (id, user_id, item_id, kind, weight_micros, occurred_at, surface, cohort_ids, at_ns, forwarded)
    SELECT d.id, d.user_id, d.item, d.kind, d.w, d.occ, d.surface, coalesce(cl.cohorts, '{}'), d.at_ns, d.fwd
      FROM decided d LEFT JOIN cohort_lists cl ON cl.ord = d.ord
  ), cohort_ledger AS (
    INSERT INTO cohort_contribution (signal_id, cohort_id, user_id, item_id, weight_micros, at_ns)
    SELECT a.id, a.cohort, a.user_id, a.item, a.w, a.at_ns FROM attributed a
  ), community AS (
    INSERT INTO community_item_aggregate AS agg (item_id, shard, signal_count, weight_micros_sum)
    SELECT d.item, v_shard, count(*), sum(d.w) FROM decided d WHERE d.fwd GROUP BY d.item ORDER BY d.item
    ON CONFLICT (item_id, shard) DO UPDATE
      SET signal_count = agg.signal_count + excluded.signal_count,
          weight_micros_sum = agg.weight_micros_sum + excluded.weight_micros_sum
  ), cohort AS (
    INSERT INTO cohort_item_aggregate AS agg (cohort_id, item_id, shard, signal_count, weight_micros_sum)
    SELECT a.cohort, a.item, v_shard, count(*), sum(a.w) FROM attributed a
     GROUP BY a.cohort, a.item ORDER BY a.cohort, a.item
    ON CONFLICT (cohort_id, item_id, shard) DO UPDATE
      SET signal_count = agg.signal_count + excluded.signal_count,
          weight_micros_sum = agg.weight_micros_sum + excluded.weight_micros_sum
  )
  SELECT d.id, d.fwd, coalesce(ac.n, 0)
    FROM decided d LEFT JOIN attributed_counts ac ON ac.id = d.id
   ORDER BY d.ord;
END
$$;
