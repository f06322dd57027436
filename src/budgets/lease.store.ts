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
  /** Forgets buckets untouched for `idleSeconds`: refilled since, they are full, as a new one is. */
  forgetIdle(idleSeconds: number): Promise<void>;
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
    async forgetIdle(idleSeconds) {
      await db.deleteFrom('fair_share_bucket').where('updated_at', '<', sql<Date>`now() - make_interval(secs => ${idleSeconds})`).execute();
    },
  };
}
