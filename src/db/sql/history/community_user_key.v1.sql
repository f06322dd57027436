-- version: 1
-- The u64 shifted into int8 (order-preserving, one numeric operation): the user's advisory lock key.
CREATE OR REPLACE FUNCTION community_user_key(p_user u64) RETURNS int8 LANGUAGE sql IMMUTABLE AS $$
  SELECT (p_user - 9223372036854775808)::int8
$$;
