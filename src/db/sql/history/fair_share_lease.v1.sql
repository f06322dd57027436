-- version: 1
-- Leases slices of principals' budgets to one instance (src/budgets/lease.store.ts). Each key is a
-- token bucket (capacity, rate per second) refilled on the database clock, so every instance sees
-- one budget. `settle` is what the instance spent beyond its leases since it last asked (it is
-- taken even when that leaves the bucket below zero: the debt then holds back the next grants) or,
-- negative, a lease it gives back; `want` is the next slice it asks for, granted up to what is
-- left. Keys are locked in order so two instances asking at once cannot deadlock.
CREATE OR REPLACE FUNCTION fair_share_lease(p_keys text[], p_settle float8[], p_want float8[], p_capacity float8[], p_rate float8[])
RETURNS TABLE (bucket text, granted float8, available float8)
LANGUAGE plpgsql AS $$
DECLARE
  r record;
  v_now timestamptz := clock_timestamp();
  v_tokens float8;
BEGIN
  FOR r IN
    SELECT * FROM unnest(p_keys, p_settle, p_want, p_capacity, p_rate) AS w(k, settle, want, capacity, rate) ORDER BY k
  LOOP
    INSERT INTO fair_share_bucket (key, tokens, updated_at) VALUES (r.k, r.capacity, v_now) ON CONFLICT (key) DO NOTHING;
    SELECT least(r.capacity, b.tokens + r.rate * greatest(extract(epoch FROM v_now - b.updated_at)::float8, 0) - r.settle)
      INTO v_tokens FROM fair_share_bucket b WHERE b.key = r.k FOR UPDATE;
    bucket := r.k;
    granted := least(greatest(r.want, 0), greatest(v_tokens, 0));
    available := v_tokens - granted;
    UPDATE fair_share_bucket SET tokens = available, updated_at = v_now WHERE key = r.k;
    RETURN NEXT;
  END LOOP;
END
$$;
