-- version: 2
-- Takes the transaction-scoped advisory locks of the given buckets, in the order given (callers
-- pass them sorted, so groups never deadlock through a waiting leave): shared for signal ingestion,
-- exclusive for leave and rejoin. The two-int4 key space (class 1129073004, 'CLmL') keeps them apart
-- from the single-bigint locks other tools take.
CREATE OR REPLACE FUNCTION lock_community_buckets(p_buckets int4[], p_shared boolean) RETURNS void LANGUAGE plpgsql
SET search_path = public, pg_temp
AS $$
DECLARE
  v_bucket int4;
BEGIN
  FOREACH v_bucket IN ARRAY p_buckets LOOP
    IF p_shared THEN
      PERFORM pg_advisory_xact_lock_shared(1129073004, v_bucket);
    ELSE
      PERFORM pg_advisory_xact_lock(1129073004, v_bucket);
    END IF;
  END LOOP;
END
$$;
