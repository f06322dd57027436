-- version: 2
-- Requests the purge of a user's contributions below their current boundary and returns its receipt.
--
-- Only while LEFT (SQLSTATE CLP01 otherwise): nothing of the user can be forwarded then, so the set
-- of rows to remove is fixed. The user's bucket lock is taken exclusively, as leave and rejoin do,
-- so the status read here cannot change underneath, and a rejoin racing this request either comes
-- first (then CLP01) or sees the running purge (community_membership_purge_guard refuses it).
-- One running purge per user: a second request returns the running one. A purge with nothing to
-- remove is finished at once, with zero counts: the receipt says there was nothing.
--
-- The cursor starts just below the previous boundary, which is the previous purge's watermark
-- (everything below it is already out of the `contribution` view), and a purge finished here holds
-- its own boundary as its watermark, as run_community_purge_chunk leaves a finished one.
CREATE OR REPLACE FUNCTION request_community_purge(p_user u64, OUT purge_id bigint, OUT created boolean)
LANGUAGE plpgsql AS $$
DECLARE
  m community_membership;
  v_from bigint;
BEGIN
  PERFORM require_read_committed();
  PERFORM lock_community_buckets(ARRAY[community_user_bucket(p_user)], false);
  SELECT * INTO m FROM community_membership WHERE user_id = p_user;
  IF m.status IS DISTINCT FROM 'LEFT' THEN
    RAISE EXCEPTION 'user % is not LEFT: leave the community layer first', p_user USING ERRCODE = 'CLP01';
  END IF;
  SELECT p.id INTO purge_id FROM community_purge p WHERE p.user_id = p_user AND p.status = 'RUNNING';
  created := NOT FOUND;
  IF NOT created THEN
    RETURN;
  END IF;
  -- Every earlier purge finished, so everything below its boundary is already gone: start there.
  v_from := coalesce((SELECT max(p.boundary_ns) FROM community_purge p WHERE p.user_id = p_user), 0);
  INSERT INTO community_purge (user_id, boundary_ns, from_ns, cursor_at_ns, cursor_signal_id, status, finished_at)
  SELECT p_user, m.left_at_ns, v_from,
         CASE WHEN x.status = 'FINISHED' THEN m.left_at_ns ELSE v_from END - 1, 9223372036854775807, x.status,
         CASE WHEN x.status = 'FINISHED' THEN now() END
    FROM (SELECT CASE WHEN EXISTS (
            SELECT 1 FROM signal s
             WHERE s.user_id = p_user AND s.forwarded
               AND s.at_ns >= v_from AND s.at_ns < m.left_at_ns)
          THEN 'RUNNING'::purge_status ELSE 'FINISHED'::purge_status END AS status) x
  RETURNING id INTO purge_id;
END
$$;
