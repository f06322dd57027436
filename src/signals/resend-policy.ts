import pg from 'pg';
import { isDeadlineError } from '../db/database-errors.js';

/** Attempts per group, the first included. */
export const MAX_ATTEMPTS = 3;

/**
 * Whether a failed attempt may still have committed: the connection was lost (say while the
 * commit's reply was in flight) or the server ended the session. Any other error the server
 * reports rolled the statement back.
 */
export function outcomeUnknown(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError)) return true;
  const code = error.code ?? '';
  return code.startsWith('08') || code.startsWith('57P');
}

/**
 * Every attempt carries the same event ids, so a resend is a no-op for whatever an earlier attempt
 * committed. Worth it after an unknown outcome and after a deadlock or serialization failure; any
 * other error would recur. Not after a deadline: a database that did not answer would make each
 * resend wait it again, so a `signal` would answer its 503 only after several deadlines instead of
 * one, like every other operation; the caller retries after `Retry-After` with the same event ids.
 */
export function worthResending(error: unknown): boolean {
  if (isDeadlineError(error)) return false;
  const code = (error as { code?: string }).code;
  return outcomeUnknown(error) || code === '40P01' || code === '40001';
}
