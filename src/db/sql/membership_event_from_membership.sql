-- version: 3
-- The change feed's LEFT and REJOINED events, written in the transaction of the change itself
-- (whoever writes: this service, a migration, an operator in psql). The event's position is the
-- row's version: membership_clock hands versions out under a row lock held until commit, so
-- positions commit in order and a reader paging by position never skips one that commits later
-- (docs/downstream.md). A write that leaves the status as it was is not an event.
-- The reason, its text and the policy version are what leave_community_layer and
-- rejoin_community_layer set for this transaction (community.change_reason*); other writers leave
-- them NULL.
CREATE OR REPLACE FUNCTION membership_event_from_membership() RETURNS trigger LANGUAGE plpgsql
SET search_path = public, pg_temp
AS $$
DECLARE
  v_reason consent_reason := nullif(current_setting('community.change_reason', true), '')::consent_reason;
  v_reason_text text := nullif(current_setting('community.change_reason_text', true), '');
  v_policy_version text := nullif(current_setting('community.change_policy_version', true), '');
BEGIN
  IF NEW.status = 'LEFT' AND (TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM 'LEFT') THEN
    INSERT INTO membership_event (position, kind, user_id, left_at_ns, reason, reason_text, policy_version)
      VALUES (NEW.version, 'LEFT', NEW.user_id, NEW.left_at_ns, v_reason, v_reason_text, v_policy_version);
  ELSIF TG_OP = 'UPDATE' AND NEW.status = 'ACTIVE' AND OLD.status = 'LEFT' THEN
    INSERT INTO membership_event (position, kind, user_id, left_at_ns, rejoined_at_ns, reason, reason_text, policy_version)
      VALUES (NEW.version, 'REJOINED', NEW.user_id, OLD.left_at_ns, NEW.rejoined_at_ns, v_reason, v_reason_text, v_policy_version);
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER membership_event_from_membership AFTER INSERT OR UPDATE OF status ON community_membership
  FOR EACH ROW EXECUTE FUNCTION membership_event_from_membership();
