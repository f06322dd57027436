-- version: 2
-- Recomputes aggregates from the contributions ledger (all targets, or one item's) and returns
-- every (target, item) whose summed shards differ from it; target '' is the community aggregate.
CREATE OR REPLACE FUNCTION verify_community_aggregates(p_item text)
RETURNS TABLE (target text, item_id text, ledger_count bigint, aggregate_count numeric,
  ledger_weight numeric, aggregate_weight numeric)
LANGUAGE sql STABLE
SET search_path = public, pg_temp
AS $$
  WITH ledger AS (
    SELECT coalesce(c.cohort_id, '') AS target, c.item_id, count(*) AS n, sum(c.weight_micros) AS w
      FROM contribution c WHERE p_item IS NULL OR c.item_id = p_item GROUP BY 1, 2
  ), aggregate AS (
    SELECT '' AS target, a.item_id, sum(a.signal_count) AS n, sum(a.weight_micros_sum) AS w
      FROM community_item_aggregate a WHERE p_item IS NULL OR a.item_id = p_item GROUP BY 1, 2
    UNION ALL
    SELECT a.cohort_id, a.item_id, sum(a.signal_count), sum(a.weight_micros_sum)
      FROM cohort_item_aggregate a WHERE p_item IS NULL OR a.item_id = p_item GROUP BY 1, 2
  )
  SELECT target, item_id, coalesce(l.n, 0), coalesce(a.n, 0), coalesce(l.w, 0), coalesce(a.w, 0)
    FROM ledger l FULL JOIN aggregate a USING (target, item_id)
   WHERE coalesce(l.n, 0) <> coalesce(a.n, 0) OR coalesce(l.w, 0) <> coalesce(a.w, 0)
   ORDER BY target, item_id
$$;
