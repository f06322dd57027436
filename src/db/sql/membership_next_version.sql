-- version: 2
-- Every membership write bumps the one-row clock under its row lock, so versions are handed out in
-- commit order: a cache that applied version V has seen every change up to V.
CREATE OR REPLACE FUNCTION membership_next_version() RETURNS bigint LANGUAGE sql VOLATILE
SET search_path = public, pg_temp
AS $$
  UPDATE membership_clock SET version = version + 1 RETURNING version
$$;
