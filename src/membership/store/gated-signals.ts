import { sql } from 'kysely';
import { INT8_MAX } from '../../ids/int8.js';

/**
 * Membership store: signals held back from leave `e` until the user's next leave (the
 * gated-signals index; the next leave through the primary key), so a page costs the same however
 * long the history is. Selected beside `leave_episode as e`.
 */
export const gatedSignals = sql<string>`(
  SELECT count(*) FROM signal s
   WHERE s.user_id = e.user_id AND NOT s.forwarded AND s.at_ns >= e.left_at_ns
     AND s.at_ns < coalesce(
       (SELECT min(n.left_at_ns) FROM leave_episode n WHERE n.user_id = e.user_id AND n.left_at_ns > e.left_at_ns),
       ${sql.lit(INT8_MAX.toString())})
)`;
