-- version: 1
-- Lower int4 half of a user lock key, with integer arithmetic only.
CREATE OR REPLACE FUNCTION community_user_lock_lo(p_key int8) RETURNS int4 LANGUAGE sql IMMUTABLE AS $$
  SELECT ((p_key & 4294967295) - 2147483648)::int4
$$;
