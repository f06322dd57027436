-- version: 5
-- Rejoins: status ACTIVE, the open episode closed with rejoined_at_ns (never at or below the
-- boundary). A user who never left is ACTIVE by default: nothing to change, no row to create.
-- Its writes name the user in community.membership_writer (community_membership_guard.sql).
-- The reason, its text and the policy version close the episode and reach the feed event as in
-- leave_community_layer.sql (which says why there are two forms and no DEFAULTs).
CREATE OR REPLACE FUNCTION rejoin_community_layer(p_user u64, p_reason consent_reason, p_reason_text text,
  p_policy_version text, OUT changed boolean, OUT status membership_status,
  OUT left_at_ns bigint, OUT version bigint)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
  m community_membership;
  v_rejoined_at bigint;
BEGIN
  PERFORM require_read_committed();
  PERFORM lock_community_buckets(ARRAY[community_user_bucket(p_user)], false);
  SELECT * INTO m FROM community_membership WHERE user_id = p_user;
  changed := coalesce(m.status = 'LEFT', false);
  IF changed THEN
    v_rejoined_at := greatest(now_ns(), m.left_at_ns + 1);
    PERFORM set_config('community.membership_writer', p_user::text, true);
    PERFORM set_config('community.change_reason', coalesce(p_reason::text, ''), true);
    PERFORM set_config('community.change_reason_text', coalesce(p_reason_text, ''), true);
    PERFORM set_config('community.change_policy_version', coalesce(p_policy_version, ''), true);
    UPDATE community_membership AS cm
       SET status = 'ACTIVE', left_at_ns = NULL, rejoined_at_ns = v_rejoined_at
     WHERE cm.user_id = p_user
     RETURNING cm.* INTO m;
    UPDATE leave_episode AS e SET rejoined_at_ns = v_rejoined_at, rejoined_reason = p_reason,
           rejoined_reason_text = p_reason_text, rejoined_policy_version = p_policy_version
     WHERE e.user_id = p_user AND e.rejoined_at_ns IS NULL;
    PERFORM set_config('community.membership_writer', '', true);
    PERFORM set_config('community.change_reason', '', true);
    PERFORM set_config('community.change_reason_text', '', true);
    PERFORM set_config('community.change_policy_version', '', true);
  END IF;
  status := coalesce(m.status, 'ACTIVE');
  left_at_ns := m.left_at_ns;
  version := m.version;
END
$$;

-- The form builds before 0024 call: a rejoin without a recorded reason.
CREATE OR REPLACE FUNCTION rejoin_community_layer(p_user u64, OUT changed boolean, OUT status membership_status,
  OUT left_at_ns bigint, OUT version bigint)
LANGUAGE sql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$ SELECT * FROM rejoin_community_layer(p_user, NULL, NULL, NULL) $$;

-- Run as their owner (the migrating role): only granted roles may call them (src/db/roles/).
REVOKE EXECUTE ON FUNCTION rejoin_community_layer(u64, consent_reason, text, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION rejoin_community_layer(u64) FROM PUBLIC;
