import type { MembershipNotification } from './cache/membership-source.js';

/**
 * The NOTIFY contract of the membership tables, written by the trigger in
 * src/db/sql/community_membership_notify.sql: channel `community_membership`, payload
 * `version,user_id,status,sent_at_us`.
 */
export const MEMBERSHIP_CHANNEL = 'community_membership';

export function decodeMembershipNotification(payload: string): MembershipNotification | null {
  const [version, userId, status, sentAtUs, extra] = payload.split(',');
  if (!version || !userId || !sentAtUs || extra !== undefined || (status !== 'LEFT' && status !== 'ACTIVE')) return null;
  try {
    return { change: { version: BigInt(version), userId, status }, sentAtUs: BigInt(sentAtUs) };
  } catch {
    return null;
  }
}
