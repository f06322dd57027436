-- version: 1
-- Leaves many users in one transaction: exactly leave_community_layer per user (its boundary,
-- history entry, feed event), one row per user in array order. The callers pass the users of one
-- lock bucket (src/membership/membership-bulk.store.ts), so a call holds one bucket exclusively and
-- ingestion of the other 63 never waits on it; the buckets of the array are taken first, sorted, so
-- an array spanning buckets cannot deadlock either, and each user's own re-take is then free.
CREATE OR REPLACE FUNCTION leave_community_layer_many(p_users u64[], p_reason consent_reason, p_reason_text text,
  p_policy_version text)
RETURNS TABLE (user_id u64, changed boolean, status membership_status, left_at_ns bigint, version bigint)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
  v_user u64;
BEGIN
  PERFORM require_read_committed();
  PERFORM lock_community_buckets(
    ARRAY(SELECT DISTINCT community_user_bucket(u) FROM unnest(p_users) AS u ORDER BY 1), false);
  FOREACH v_user IN ARRAY p_users LOOP
    SELECT v_user, l.changed, l.status, l.left_at_ns, l.version
      INTO user_id, changed, status, left_at_ns, version
      FROM leave_community_layer(v_user, p_reason, p_reason_text, p_policy_version) AS l;
    RETURN NEXT;
  END LOOP;
END
$$;

-- Run as its owner (the migrating role): only granted roles may call it (src/db/roles/).
REVOKE EXECUTE ON FUNCTION leave_community_layer_many(u64[], consent_reason, text, text) FROM PUBLIC;
