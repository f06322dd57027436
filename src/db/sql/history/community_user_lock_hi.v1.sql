-- version: 1
-- Upper int4 half of a user lock key. Two int4 halves keep user locks in a key space apart from the
-- single-bigint one other tools use.
CREATE OR REPLACE FUNCTION community_user_lock_hi(p_key int8) RETURNS int4 LANGUAGE sql IMMUTABLE AS $$
  SELECT (p_key >> 32)::int4
$$;
