-- version: 2
-- leave_episode is the leave history: the windows a purge needs to find a user's contributions
-- before each boundary. Only leave_community_layer and rejoin_community_layer write it (they name
-- their user in community.membership_writer, see community_membership_guard.sql); direct inserts,
-- updates, deletes and truncates are refused. It outlives an erased membership row on purpose.
CREATE OR REPLACE FUNCTION leave_episode_guard() RETURNS trigger LANGUAGE plpgsql
SET search_path = public, pg_temp
AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'TRUNCATE') THEN
    RAISE EXCEPTION '% on leave_episode is refused: it is the leave history a purge needs, written only by leave_community_layer(user_id) and rejoin_community_layer(user_id)', TG_OP
      USING ERRCODE = 'integrity_constraint_violation',
            DETAIL = 'It is kept when a membership row is erased.';
  ELSIF current_setting('community.membership_writer', true) = NEW.user_id::text THEN
    IF TG_OP = 'INSERT' THEN
      RETURN NEW;
    ELSIF OLD.user_id = NEW.user_id THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION '% on leave_episode is refused: call leave_community_layer(user_id) or rejoin_community_layer(user_id)', TG_OP
    USING ERRCODE = 'integrity_constraint_violation',
          DETAIL = 'They write the history together with the membership, under the user''s lock.';
END
$$;

CREATE OR REPLACE TRIGGER leave_episode_guard BEFORE INSERT OR UPDATE OR DELETE ON leave_episode
  FOR EACH ROW EXECUTE FUNCTION leave_episode_guard();

CREATE OR REPLACE TRIGGER leave_episode_guard_truncate BEFORE TRUNCATE ON leave_episode
  FOR EACH STATEMENT EXECUTE FUNCTION leave_episode_guard();
