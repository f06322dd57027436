/** What pg's `query_timeout` rejects with. */
const QUERY_DEADLINE_MESSAGE = 'Query read timeout';

/**
 * Errors that say "the database cannot serve right now", not "this request is wrong": the client
 * should retry shortly (HTTP 503). Anything else from the database is a bug and stays a masked 500.
 */
const TRANSIENT_SQLSTATES = new Set([
  '57P01', // admin_shutdown: the server is restarting
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
  '53200', // out_of_memory
  '53100', // disk_full
  '55P03', // lock_not_available: lock_timeout
  '57014', // query_canceled: statement_timeout
  '40001', // serialization_failure (after our retries)
  '40P01', // deadlock_detected (after our retries)
  '25P03', // idle_in_transaction_session_timeout
  '25006', // read_only_sql_transaction: a standby, a demoted primary, default_transaction_read_only
]);

/** The session is read-only: keeping the connection would keep failing after a failover. */
const READ_ONLY_SQLSTATE = '25006';

const TRANSIENT_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

// pg reports lost sockets and pool waits by message only.
const TRANSIENT_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Cannot use a pool after calling end on the pool',
  // pg's client-side deadline (query_timeout): the server stopped answering.
  QUERY_DEADLINE_MESSAGE,
];

export function isTransientDatabaseError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (TRANSIENT_SQLSTATES.has(code) || code.startsWith('08') || TRANSIENT_NODE_CODES.has(code))) return true;
  if (TRANSIENT_MESSAGES.some((message) => error.message.includes(message))) return true;
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== error && isTransientDatabaseError(cause);
}

/** A connection that must not be lent again after this error (see discardingPool). */
export function mustDiscardConnection(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (error as { code?: unknown }).code === READ_ONLY_SQLSTATE || error.message === QUERY_DEADLINE_MESSAGE;
}

/**
 * The database did not answer within a deadline: a statement past `query_timeout`, or no connection
 * (a free one, or a new one opened) within `DB_ACQUIRE_TIMEOUT_MS`. Trying again at once would wait the whole deadline again.
 */
export function isDeadlineError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // pg's words: a statement's deadline, a pool wait, a new connection that never completed its start-up.
  return [QUERY_DEADLINE_MESSAGE, 'timeout exceeded when trying to connect', 'Connection terminated due to connection timeout'].some(
    (message) => error.message.includes(message),
  );
}

/** What a connection that was never made says, by Node's code (its own message is empty for a refused dual-stack localhost). */
const CONNECT_NODE_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'connection refused (nothing listens there)',
  ENOTFOUND: 'host name not found (DNS)',
  EAI_AGAIN: 'host name lookup failed (DNS)',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ECONNRESET: 'connection reset',
};

/**
 * Why a session could not be had, in the server's words or Node's, or null for an error of a session
 * that was made: a refused or unanswered connection, a failed login (SQLSTATE class 28: wrong password,
 * unknown role, no pg_hba.conf entry), an unknown database (3D000), no free slot or a server starting
 * (08…, 53300, 57P03).
 */
export function connectionFailure(error: unknown): string | null {
  if (!(error instanceof Error)) return null;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return null;
  if (code in CONNECT_NODE_FAILURES) return `${CONNECT_NODE_FAILURES[code]}${error.message ? `: ${error.message}` : ''}`;
  // With password authentication the server does not say which: it would tell who has a login.
  if (code === '28P01') return `${error.message} (a wrong password, or no such role)`;
  if (code.startsWith('28') || code.startsWith('08') || ['3D000', '53300', '57P03'].includes(code)) return error.message;
  return null;
}
