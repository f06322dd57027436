import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

const NEWLINE = 0x0a;

/**
 * Runs a `COPY … TO STDOUT` of NDJSON lines on `client` and hands each chunk PostgreSQL sends to
 * `use` with the number of lines it completes (a chunk may end mid-line, or mid-character), as
 * bytes: Node never decodes a row. The next chunk is read only once `use` resolves: while it waits,
 * the stream stops reading the socket, and PostgreSQL's sends block (backpressure down to the table).
 *
 * If `use` throws (the client went away), the session is closed: a COPY cannot be stopped from
 * this side but by cancelling it, and the connection would stay mid-COPY; closing it ends the
 * statement in the server and the pool drops the connection. The error is rethrown.
 */
export async function copyLines(
  client: pg.PoolClient,
  statement: string,
  statementTimeoutMs: number,
  use: (chunk: Buffer, lines: number) => Promise<void>,
): Promise<void> {
  // pg's client-side deadline (DB_QUERY_TIMEOUT_MS) would cut a long COPY: this one backs up the
  // server's statement_timeout as that one backs up the pool's.
  const copy = client.query(Object.assign(copyTo(statement), { query_timeout: statementTimeoutMs + 1_000 }));
  try {
    for await (const chunk of copy as AsyncIterable<Buffer>) await use(chunk, newlines(chunk));
  } catch (error) {
    // Active query: pg closes the socket at once (no goodbye the busy server would not read).
    await client.end();
    throw error;
  } finally {
    // pg arms that deadline's timer around `callback`, which only pg's own queries call.
    (copy as { callback?: () => void }).callback?.();
  }
}

function newlines(chunk: Buffer): number {
  let count = 0;
  for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) count++;
  return count;
}
