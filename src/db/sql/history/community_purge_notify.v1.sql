-- version: 1
-- Every instance's communityPurgeProgress streams hear of a purge's progress, whoever ran the
-- chunk (any instance's worker, an operator in psql). Channel and payload are decoded by
-- src/purge/purge-notification.ts (keep them in step): channel community_purge, payload
-- purge_id,user_id,status,removed_so_far (under 100 bytes; the limit is 8000). One per request
-- and per chunk: purges are rare and never on the signal hot path.
CREATE OR REPLACE FUNCTION community_purge_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('community_purge', concat_ws(',', NEW.id, NEW.user_id, NEW.status, NEW.removed_so_far));
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER community_purge_notify AFTER INSERT OR UPDATE ON community_purge
  FOR EACH ROW EXECUTE FUNCTION community_purge_notify();
