-- version: 4
-- One chunk of one running purge, all in the caller's single transaction: claims the oldest
-- running purge no other worker holds (FOR UPDATE SKIP LOCKED), takes the next p_limit forwarded
-- signals of its user below its boundary after the cursor, deletes their cohort entries, subtracts
-- exactly those counts and weights from the aggregates (a delta row in a shard of this
-- connection's, readers sum shards), adds them to the receipt and moves the cursor. The signals themselves are
-- not written (they are the user's own record): the cursor is the purge's watermark, and the
-- `contribution` view leaves out a user's signals at or below any of their purges' cursors
-- (migration 0015). A crash rolls all of it back; a committed chunk is never taken again (the
-- cursor moved). A chunk shorter than p_limit finishes the purge and moves the cursor to just
-- below the boundary, so a finished purge hides exactly the signals with at_ns < boundary_ns.
--
-- Cohort entries exist only for forwarded signals, with their signal's (user_id, at_ns, id)
-- (ingest_signals), so the user's cohort entries keyed in (cursor, last picked] are exactly the
-- picked signals' entries: one range of the key (migration 0010), not a lookup per signal.
-- Purge shards are 32…63, beside ingest_signals' 0…31 (pg_backend_pid() % 32): a chunk holds its
-- aggregate rows' locks until it commits, and no other user's signal waits on them.
-- Returns nothing when no purge is waiting.
CREATE OR REPLACE FUNCTION run_community_purge_chunk(p_limit int,
  OUT purge_id bigint, OUT user_id u64, OUT finished boolean, OUT removed_so_far bigint)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
  p community_purge;
  v_shard int2 := (32 + pg_backend_pid() % 32)::int2;
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
     WHERE s.user_id = p.user_id AND s.forwarded AND s.at_ns < p.boundary_ns
       AND (s.at_ns, s.id) > (p.cursor_at_ns, p.cursor_signal_id)
     ORDER BY s.at_ns, s.id
     LIMIT p_limit
  ), last AS MATERIALIZED (
    SELECT pk.at_ns, pk.id FROM picked pk ORDER BY pk.at_ns DESC, pk.id DESC LIMIT 1
  ), unlinked AS (
    DELETE FROM cohort_contribution c
     WHERE c.user_id = p.user_id
       AND (c.at_ns, c.signal_id) > (p.cursor_at_ns, p.cursor_signal_id)
       AND (c.at_ns, c.signal_id) <= (SELECT l.at_ns, l.id FROM last l)
    RETURNING c.cohort_id, c.item_id, c.weight_micros
  ), removed AS (
    SELECT '' AS target, pk.item_id, count(*) AS n, sum(pk.weight_micros) AS w FROM picked pk GROUP BY pk.item_id
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
         l.at_ns, l.id
    INTO v_signals, v_entries, v_weight, v_last_at, v_last_id
    FROM (SELECT 1) one LEFT JOIN last l ON true;
  finished := v_signals < p_limit;
  UPDATE community_purge c
     SET removed_so_far = c.removed_so_far + v_entries,
         weight_micros_removed = c.weight_micros_removed + v_weight,
         chunks = c.chunks + CASE WHEN v_signals > 0 THEN 1 ELSE 0 END,
         cursor_at_ns = CASE WHEN finished THEN c.boundary_ns - 1 ELSE coalesce(v_last_at, c.cursor_at_ns) END,
         cursor_signal_id = CASE WHEN finished THEN 9223372036854775807 ELSE coalesce(v_last_id, c.cursor_signal_id) END,
         status = CASE WHEN finished THEN 'FINISHED'::purge_status ELSE c.status END,
         finished_at = CASE WHEN finished THEN now() ELSE NULL END
   WHERE c.id = p.id
   RETURNING c.id, c.user_id, c.removed_so_far INTO purge_id, user_id, removed_so_far;
END
$$;

-- Runs as its owner (the migrating role): only granted roles may call it (src/db/roles/).
REVOKE EXECUTE ON FUNCTION run_community_purge_chunk(int) FROM PUBLIC;
