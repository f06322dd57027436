/**
 * What the running service's role holds, and nothing more (docs/operations.md, "Roles and
 * grants"): CONNECT; USAGE on our schema and graphile-worker's; SELECT on every table and view of
 * ours; INSERT, UPDATE, DELETE only on the tables below; EXECUTE on every function. The boundary
 * tables (membership, leave history, the clock, signals, contributions, aggregates, purges, the
 * membership outbox) it reads only: it changes them through the SECURITY DEFINER functions in
 * src/db/sql/. graphile-worker's tables it reads and writes: its worker takes, completes and
 * fails jobs with plain statements and registers its task names (row-level security on: one policy
 * lets the role see every row).
 */
export const SERVICE_SCHEMA = 'public';
export const WORKER_SCHEMA = 'graphile_worker';

/** Tables the service writes with its own statements: none of them is the boundary. */
export const APP_WRITABLE_TABLES = [
  'persisted_document',
  'webhook_endpoint',
  'webhook_delivery',
  'webhook_dispatch',
  'fair_share_bucket',
  'downstream_processor',
  'purge_acknowledgement',
  'purge_acknowledgement_change',
] as const;

export const TABLE_WRITES = ['INSERT', 'UPDATE', 'DELETE'] as const;

/** How an operator grants them: the sentence every refusal ends with. */
export function grantAdvice(role: string): string {
  return `grant them as the owner with \`npm run migrate -- --grant-to ${role}\` (or DATABASE_APP_ROLE=${role} for the migrate Job)`;
}
