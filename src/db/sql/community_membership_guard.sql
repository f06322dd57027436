-- version: 2
-- Direct writes to community_membership would skip what leave_community_layer and
-- rejoin_community_layer do together: the user's lock, the boundary fenced above their newest
-- forwarded signal, and the leave history. While writing, those functions name their user in the
-- transaction-local setting community.membership_writer (and clear it before returning); any other
-- write of user_id, status, left_at_ns or rejoined_at_ns, any other insert, a truncate, and the
-- delete of a LEFT user (ACTIVE without a rejoin) are refused with a message naming the functions.
-- Deleting an ACTIVE user's row (erasing the record) keeps the invariants and is allowed; their
-- leave history stays (leave_episode_guard.sql). An update that changes none of those columns passes.
--
-- A guard against mistakes, not a security boundary: whoever may write the table may also set that
-- setting, or disable the trigger as its owner (README, "Writing membership by SQL").
CREATE OR REPLACE FUNCTION community_membership_guard() RETURNS trigger LANGUAGE plpgsql
SET search_path = public, pg_temp
AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    RAISE EXCEPTION 'TRUNCATE community_membership is refused: call rejoin_community_layer(user_id) for each user to make ACTIVE'
      USING ERRCODE = 'integrity_constraint_violation',
            DETAIL = 'A truncate would make every LEFT user ACTIVE without a rejoin, unseen by the caches.';
  ELSIF TG_OP = 'DELETE' THEN
    IF OLD.status = 'LEFT' THEN
      RAISE EXCEPTION 'DELETE of user %, who is LEFT, is refused: call rejoin_community_layer(user_id) first', OLD.user_id
        USING ERRCODE = 'integrity_constraint_violation',
              DETAIL = 'Without a row the user is ACTIVE: the delete would rejoin them without closing the leave. The leave history is kept either way.';
    END IF;
    RETURN OLD;
  ELSIF current_setting('community.membership_writer', true) = NEW.user_id::text THEN
    IF TG_OP = 'INSERT' THEN
      RETURN NEW;
    ELSIF OLD.user_id = NEW.user_id THEN
      RETURN NEW;
    END IF;
  ELSIF TG_OP = 'UPDATE' THEN
    IF (NEW.user_id, NEW.status, NEW.left_at_ns, NEW.rejoined_at_ns)
       IS NOT DISTINCT FROM (OLD.user_id, OLD.status, OLD.left_at_ns, OLD.rejoined_at_ns) THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION '% on community_membership is refused: call leave_community_layer(user_id) or rejoin_community_layer(user_id)', TG_OP
    USING ERRCODE = 'integrity_constraint_violation',
          DETAIL = 'They take the user''s lock, fence the boundary above the newest forwarded signal and keep the leave history.';
END
$$;

CREATE OR REPLACE TRIGGER community_membership_guard BEFORE INSERT OR UPDATE OR DELETE ON community_membership
  FOR EACH ROW EXECUTE FUNCTION community_membership_guard();

CREATE OR REPLACE TRIGGER community_membership_guard_truncate BEFORE TRUNCATE ON community_membership
  FOR EACH STATEMENT EXECUTE FUNCTION community_membership_guard();
