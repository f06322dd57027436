-- version: 2
-- The lock bucket that guards a user's boundary: the user id mod 64. A group of signals locks the
-- buckets of its users, not each user, so a 1000-user group holds at most 64 advisory locks and a
-- stock PostgreSQL (max_locks_per_transaction = 64) has room for many groups at once. Users who
-- share a bucket only share waits behind a leave or rejoin, which are rare and short.
-- Inlined like community_user_key (no SET search_path, see there): every name in the body is qualified.
CREATE OR REPLACE FUNCTION community_user_bucket(p_user u64) RETURNS int4 LANGUAGE sql IMMUTABLE AS $$
  SELECT CAST(public.community_user_key(p_user) OPERATOR(pg_catalog.&) 63 AS pg_catalog.int4)
$$;
