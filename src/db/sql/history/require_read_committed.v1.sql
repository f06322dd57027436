-- version: 1
-- The boundary functions rely on READ COMMITTED taking a fresh snapshot per statement: the state
-- read after a lock is granted then includes whatever the previous holder committed.
CREATE OR REPLACE FUNCTION require_read_committed() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'the community boundary functions need READ COMMITTED (a fresh snapshot after each lock)';
  END IF;
END
$$;
