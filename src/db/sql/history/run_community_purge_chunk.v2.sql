-- version: 2
-- One chunk of one running purge, all in the caller's single transaction: claims the oldest
-- running purge no other worker holds (FOR UPDATE SKIP LOCKED), takes the next p_limit forwarded
-- signals of its user below its boundary after the cursor, marks them purged (the signal itself
-- stays: it is the user's own record), deletes their cohort entries, subtracts exactly those counts
-- and weights from the aggregates (a delta row in this connection's shard; readers sum shards),
-- adds them to the receipt and moves the cursor. A crash rolls all of it back; a committed chunk is
-- never taken again (the cursor moved and its rows carry purge_id). A chunk shorter than p_limit
-- finishes the purge. Cohort entries exist only for forwarded signals (ingest_signals), so the
-- signals' keyset walks every ledger entry of the user. Rows are found by their keys, which lead
-- with (user_id, at_ns) (migration 0010).
-- Returns nothing when no purge is waiting.
CREATE OR REPLACE FUNCTION run_community_purge_chunk(p_limit int,
  OUT purge_id bigint, OUT user_id u64, OUT finished boolean, OUT removed_so_far bigint)
LANGUAGE plpgsql AS $$
DECLARE
  p community_purge;
  v_shard int2 := (pg_backend_pid() % 32)::int2;
  v_signals int;
  v_entries bigint;
  v_weight numeric;
  v_last_at bigint;
  v_last_id bigint;
BEGIN
  SELECT * INTO p FROM community_purge c WHERE c.status = 'RUNNING' ORDER BY c.id LIMIT 1 FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  WITH picked AS MATERIALIZED (
    SELECT s.id, s.item_id, s.weight_micros, s.at_ns FROM signal s
     WHERE s.user_id = p.user_id AND s.forwarded AND s.purge_id IS NULL AND s.at_ns < p.boundary_ns
       AND (s.at_ns, s.id) > (p.cursor_at_ns, p.cursor_signal_id)
     ORDER BY s.at_ns, s.id
     LIMIT p_limit
  ), marked AS (
    UPDATE signal s SET purge_id = p.id FROM picked WHERE s.user_id = p.user_id AND s.at_ns = picked.at_ns AND s.id = picked.id
    RETURNING s.item_id, s.weight_micros
  ), unlinked AS (
    DELETE FROM cohort_contribution c USING picked
     WHERE c.user_id = p.user_id AND c.at_ns = picked.at_ns AND c.signal_id = picked.id
    RETURNING c.cohort_id, c.item_id, c.weight_micros
  ), removed AS (
    SELECT '' AS target, m.item_id, count(*) AS n, sum(m.weight_micros) AS w FROM marked m GROUP BY m.item_id
    UNION ALL
    SELECT u.cohort_id, u.item_id, count(*), sum(u.weight_micros) FROM unlinked u GROUP BY u.cohort_id, u.item_id
  ), community AS (
    INSERT INTO community_item_aggregate AS agg (item_id, shard, signal_count, weight_micros_sum)
    SELECT r.item_id, v_shard, -r.n, -r.w FROM removed r WHERE r.target = '' ORDER BY r.item_id
    ON CONFLICT (item_id, shard) DO UPDATE
      SET signal_count = agg.signal_count + excluded.signal_count,
          weight_micros_sum = agg.weight_micros_sum + excluded.weight_micros_sum
  ), cohort AS (
    INSERT INTO cohort_item_aggregate AS agg (cohort_id, item_id, shard, signal_count, weight_micros_sum)
    SELECT r.target, r.item_id, v_shard, -r.n, -r.w FROM removed r WHERE r.target <> '' ORDER BY r.target, r.item_id
    ON CONFLICT (cohort_id, item_id, shard) DO UPDATE
      SET signal_count = agg.signal_count + excluded.signal_count,
          weight_micros_sum = agg.weight_micros_sum + excluded.weight_micros_sum
  ), per_target AS (
    INSERT INTO community_purge_target AS t (purge_id, cohort_id, entries, weight_micros)
    SELECT p.id, r.target, sum(r.n), sum(r.w) FROM removed r GROUP BY r.target
    ON CONFLICT ON CONSTRAINT community_purge_target_pkey DO UPDATE
      SET entries = t.entries + excluded.entries, weight_micros = t.weight_micros + excluded.weight_micros
  )
  SELECT (SELECT count(*) FROM picked),
         (SELECT coalesce(sum(r.n), 0) FROM removed r),
         (SELECT coalesce(sum(r.w), 0) FROM removed r),
         last.at_ns, last.id
    INTO v_signals, v_entries, v_weight, v_last_at, v_last_id
    FROM (SELECT 1) one
    LEFT JOIN LATERAL (SELECT pk.at_ns, pk.id FROM picked pk ORDER BY pk.at_ns DESC, pk.id DESC LIMIT 1) last ON true;
  finished := v_signals < p_limit;
  UPDATE community_purge c
     SET removed_so_far = c.removed_so_far + v_entries,
         weight_micros_removed = c.weight_micros_removed + v_weight,
         chunks = c.chunks + CASE WHEN v_signals > 0 THEN 1 ELSE 0 END,
         cursor_at_ns = coalesce(v_last_at, c.cursor_at_ns),
         cursor_signal_id = coalesce(v_last_id, c.cursor_signal_id),
         status = CASE WHEN finished THEN 'FINISHED'::purge_status ELSE c.status END,
         finished_at = CASE WHEN finished THEN now() ELSE NULL END
   WHERE c.id = p.id
   RETURNING c.id, c.user_id, c.removed_so_far INTO purge_id, user_id, removed_so_far;
END
$$;
