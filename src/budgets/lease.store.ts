import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** One bucket's part of a lease request (fair_share_lease.sql). */
export interface LeaseRequest {
  key: string;
  /** Spent beyond the leases held since the last request; negative: a lease given back. */
  settle: number;
  /** The slice asked for now (0: only settling). */
  want: number;
  capacity: number;
  rate: number;
}

export interface LeaseGrant {
  key: string;
  granted: number;
  /** What the bucket holds after this grant (below zero while debts are being paid off). */
  available: number;
}

export interface LeaseStore {
  lease(requests: readonly LeaseRequest[]): Promise<LeaseGrant[]>;
  /** Forgets buckets under each key prefix untouched for its `idleSeconds`: refilled since, they are full, as a new one is. */
  forgetIdle(rules: ReadonlyArray<{ prefix: string; idleSeconds: number }>): Promise<void>;
}

/** Buckets shared by every instance: the owner of `fair_share_bucket`, one round trip per batch. */
export function leaseStore(db: Kysely<Database>): LeaseStore {
  return {
    async lease(requests) {
      const column = <K extends keyof LeaseRequest>(name: K) => requests.map((request) => request[name]);
      const { rows } = await sql<{ bucket: string; granted: number; available: number }>`
        SELECT bucket, granted, available FROM fair_share_lease(
          ${column('key')}::text[], ${column('settle')}::float8[], ${column('want')}::float8[],
          ${column('capacity')}::float8[], ${column('rate')}::float8[])`.execute(db);
      return rows.map((row) => ({ key: row.bucket, granted: Number(row.granted), available: Number(row.available) }));
    },
    async forgetIdle(rules) {
      const shortest = Math.min(...rules.map((rule) => rule.idleSeconds));
      await sql`
        DELETE FROM fair_share_bucket b
        USING unnest(${rules.map((rule) => rule.prefix)}::text[], ${rules.map((rule) => rule.idleSeconds)}::float8[]) AS r(prefix, idle)
        WHERE b.updated_at < now() - make_interval(secs => ${shortest})
          AND starts_with(b.key, r.prefix) AND b.updated_at < now() - make_interval(secs => r.idle)`.execute(db);
    },
  };
}
