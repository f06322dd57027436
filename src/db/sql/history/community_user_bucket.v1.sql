-- version: 1
-- The lock bucket that guards a user's boundary: the user id mod 64. A group of signals locks the
-- buckets of its users, not each user, so a 1000-user group holds at most 64 advisory locks and a
-- stock PostgreSQL (max_locks_per_transaction = 64) has room for many groups at once. Users who
-- share a bucket only share waits behind a leave or rejoin, which are rare and short.
CREATE OR REPLACE FUNCTION community_user_bucket(p_user u64) RETURNS int4 LANGUAGE sql IMMUTABLE AS $$
  SELECT (community_user_key(p_user) & 63)::int4
$$;
