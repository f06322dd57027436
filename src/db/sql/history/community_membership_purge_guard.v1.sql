-- version: 1
-- A rejoin (LEFT to ACTIVE, or deleting the row, which reads as ACTIVE) while a purge of the user
-- runs is refused with SQLSTATE CLP02: the purge's rows are fixed by its boundary, but a rejoined
-- user's receipt would be finishing while their new signals flow, and the user asked to be gone
-- first. Leaving is never refused. The purge request takes the same bucket lock as rejoin, so the
-- running purge a rejoin could miss does not exist.
CREATE OR REPLACE FUNCTION community_membership_purge_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status = 'LEFT' AND (TG_OP = 'DELETE' OR NEW.status <> 'LEFT')
     AND EXISTS (SELECT 1 FROM community_purge p WHERE p.user_id = OLD.user_id AND p.status = 'RUNNING') THEN
    RAISE EXCEPTION 'a purge of the contributions of user % is running: rejoin when it has finished', OLD.user_id
      USING ERRCODE = 'CLP02';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

CREATE OR REPLACE TRIGGER community_membership_purge_guard BEFORE UPDATE OR DELETE ON community_membership
  FOR EACH ROW EXECUTE FUNCTION community_membership_purge_guard();
