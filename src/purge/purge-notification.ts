import type { PurgeStatus } from '../db/schema.js';

/**
 * The NOTIFY contract of the purge table, written by the trigger in
 * src/db/sql/community_purge_notify.sql: channel `community_purge`, payload
 * `purge_id,user_id,status,removed_so_far`.
 */
export const PURGE_CHANNEL = 'community_purge';

export interface PurgeChange {
  userId: string;
  /** What a progress stream shows of a purge: it re-reads only when this moved. */
  key: string;
}

export function progressKey(purgeId: string, status: PurgeStatus, removedSoFar: number | string): string {
  return `${purgeId}/${status}/${removedSoFar}`;
}

export function decodePurgeNotification(payload: string): PurgeChange | null {
  const [purgeId, userId, status, removedSoFar, extra] = payload.split(',');
  if (!purgeId || !userId || !removedSoFar || extra !== undefined || (status !== 'RUNNING' && status !== 'FINISHED')) return null;
  return { userId, key: progressKey(purgeId, status, removedSoFar) };
}
