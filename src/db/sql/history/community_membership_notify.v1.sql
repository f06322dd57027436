-- version: 1
-- Every writer is seen by every cache: this service, a migration, an operator in psql.
-- Channel and payload are decoded by src/membership/membership-notification.ts (keep them in step):
-- channel community_membership, payload version,user_id,status,sent_at_us (about 60 bytes; the
-- limit is 8000). A delete reads as ACTIVE, with a fresh version.
CREATE OR REPLACE FUNCTION community_membership_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('community_membership', concat_ws(',', membership_next_version(), OLD.user_id,
      'ACTIVE', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint));
  ELSE
    PERFORM pg_notify('community_membership', concat_ws(',', NEW.version, NEW.user_id,
      NEW.status, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint));
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER community_membership_notify AFTER INSERT OR UPDATE OR DELETE ON community_membership
  FOR EACH ROW EXECUTE FUNCTION community_membership_notify();
