-- version: 2
-- The change feed's PURGE_REQUESTED and PURGE_FINISHED events, in the purge's own transactions.
-- Each takes the next membership_clock version as its position, so purge events and membership
-- changes share one order that commits in order (membership_event_from_membership.sql). A purge
-- that found nothing is requested and finished in one insert: two events.
CREATE OR REPLACE FUNCTION membership_event_from_purge() RETURNS trigger LANGUAGE plpgsql
SET search_path = public, pg_temp
AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO membership_event (position, kind, user_id, left_at_ns, purge_id)
      VALUES (membership_next_version(), 'PURGE_REQUESTED', NEW.user_id, NEW.boundary_ns, NEW.id);
  END IF;
  IF NEW.status = 'FINISHED' AND (TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM 'FINISHED') THEN
    INSERT INTO membership_event (position, kind, user_id, left_at_ns, purge_id)
      VALUES (membership_next_version(), 'PURGE_FINISHED', NEW.user_id, NEW.boundary_ns, NEW.id);
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER membership_event_from_purge AFTER INSERT OR UPDATE OF status ON community_purge
  FOR EACH ROW EXECUTE FUNCTION membership_event_from_purge();
