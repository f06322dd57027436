/** The database clock in microseconds since the epoch, as SQL text: the clock NOTIFY payloads carry. */
export const NOW_US_SQL = '(extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text';
