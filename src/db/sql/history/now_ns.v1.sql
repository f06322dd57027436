-- version: 1
-- Nanoseconds since the Unix epoch from the database clock (microsecond resolution): the one clock
-- every boundary and contribution is stamped with.
CREATE OR REPLACE FUNCTION now_ns() RETURNS bigint LANGUAGE sql VOLATILE AS $$
  SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint * 1000
$$;
