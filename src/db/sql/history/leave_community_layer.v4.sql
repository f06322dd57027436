-- version: 4
-- Leaves the community layer: status LEFT, the boundary stamped after the user's lock is held
-- exclusively, and a new history episode. Returns the resulting state and whether this call
-- changed it; leaving twice never moves the boundary.
--
-- The boundary is fenced above the user's newest forwarded signal, so clock steps or equal
-- microseconds cannot put a contribution inside the leave window, and at or after their last
-- rejoin (from the history, which outlives an erased membership row).
--
-- Its writes are the ones community_membership_guard.sql lets through: they name the user in
-- community.membership_writer, cleared again before returning.
CREATE OR REPLACE FUNCTION leave_community_layer(p_user u64, OUT changed boolean, OUT status membership_status,
  OUT left_at_ns bigint, OUT version bigint)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
  m community_membership;
  v_left_at bigint;
BEGIN
  PERFORM require_read_committed();
  PERFORM lock_community_buckets(ARRAY[community_user_bucket(p_user)], false);
  SELECT * INTO m FROM community_membership WHERE user_id = p_user;
  changed := m.status IS DISTINCT FROM 'LEFT'; -- leaving twice never moves the boundary
  IF changed THEN
    v_left_at := greatest(now_ns(),
      (SELECT max(e.rejoined_at_ns) FROM leave_episode e WHERE e.user_id = p_user),
      (SELECT max(s.at_ns) + 1 FROM signal s WHERE s.user_id = p_user AND s.forwarded));
    PERFORM set_config('community.membership_writer', p_user::text, true);
    INSERT INTO community_membership AS cm (user_id, status, left_at_ns)
      VALUES (p_user, 'LEFT', v_left_at)
      ON CONFLICT (user_id) DO UPDATE SET status = 'LEFT', left_at_ns = excluded.left_at_ns
      RETURNING cm.* INTO m;
    INSERT INTO leave_episode (user_id, left_at_ns) VALUES (p_user, v_left_at);
    PERFORM set_config('community.membership_writer', '', true);
  END IF;
  status := m.status;
  left_at_ns := m.left_at_ns;
  version := m.version;
END
$$;

-- Runs as its owner (the migrating role): only granted roles may call it (src/db/roles/).
REVOKE EXECUTE ON FUNCTION leave_community_layer(u64) FROM PUBLIC;
