-- version: 1
-- Rejoins many users in one transaction: exactly rejoin_community_layer per user, one row per user
-- in array order, with the locking of leave_community_layer_many.sql. A LEFT user whose purge runs
-- is reported with refusal 'PURGE_IN_PROGRESS' and left as they are, instead of the purge guard's
-- CLP02 failing the whole call: checked under the bucket lock, which a purge request takes too, so
-- no purge can start between the check and the rejoin. No subtransaction per user (thousands
-- would overflow the subtransaction cache).
CREATE OR REPLACE FUNCTION rejoin_community_layer_many(p_users u64[], p_reason consent_reason, p_reason_text text,
  p_policy_version text)
RETURNS TABLE (user_id u64, changed boolean, status membership_status, left_at_ns bigint, version bigint,
  refusal text)
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
    IF EXISTS (SELECT 1 FROM community_membership m
                 JOIN community_purge p ON p.user_id = m.user_id AND p.status = 'RUNNING'
                WHERE m.user_id = v_user AND m.status = 'LEFT') THEN
      SELECT v_user, false, m.status, m.left_at_ns, m.version, 'PURGE_IN_PROGRESS'
        INTO user_id, changed, status, left_at_ns, version, refusal
        FROM community_membership m WHERE m.user_id = v_user;
    ELSE
      SELECT v_user, r.changed, r.status, r.left_at_ns, r.version, NULL
        INTO user_id, changed, status, left_at_ns, version, refusal
        FROM rejoin_community_layer(v_user, p_reason, p_reason_text, p_policy_version) AS r;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;

-- Run as its owner (the migrating role): only granted roles may call it (src/db/roles/).
REVOKE EXECUTE ON FUNCTION rejoin_community_layer_many(u64[], consent_reason, text, text) FROM PUBLIC;
