-- version: 2
-- Stamps every inserted or updated membership row with the next version, whoever writes it.
CREATE OR REPLACE FUNCTION community_membership_stamp() RETURNS trigger LANGUAGE plpgsql
SET search_path = public, pg_temp
AS $$
BEGIN
  NEW.version := membership_next_version();
  NEW.updated_at := now();
  RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER community_membership_stamp BEFORE INSERT OR UPDATE ON community_membership
  FOR EACH ROW EXECUTE FUNCTION community_membership_stamp();
