-- version: 4
-- Rejoins: status ACTIVE, the open episode closed with rejoined_at_ns (never at or below the
-- boundary). A user who never left is ACTIVE by default: nothing to change, no row to create.
-- Its writes name the user in community.membership_writer (community_membership_guard.sql).
CREATE OR REPLACE FUNCTION rejoin_community_layer(p_user u64, OUT changed boolean, OUT status membership_status,
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
    UPDATE community_membership AS cm
       SET status = 'ACTIVE', left_at_ns = NULL, rejoined_at_ns = v_rejoined_at
     WHERE cm.user_id = p_user
     RETURNING cm.* INTO m;
    UPDATE leave_episode AS e SET rejoined_at_ns = v_rejoined_at
     WHERE e.user_id = p_user AND e.rejoined_at_ns IS NULL;
    PERFORM set_config('community.membership_writer', '', true);
  END IF;
  status := coalesce(m.status, 'ACTIVE');
  left_at_ns := m.left_at_ns;
  version := m.version;
END
$$;

-- Runs as its owner (the migrating role): only granted roles may call it (src/db/roles/).
REVOKE EXECUTE ON FUNCTION rejoin_community_layer(u64) FROM PUBLIC;
