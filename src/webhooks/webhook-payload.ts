import type { ConsentReason, MembershipEventKind } from '../db/schema.js';

/** The Standard Webhooks `type` of each feed event kind. */
export const EVENT_TYPES: Record<MembershipEventKind, string> = {
  LEFT: 'community.membership.left',
  REJOINED: 'community.membership.rejoined',
  PURGE_REQUESTED: 'community.purge.requested',
  PURGE_FINISHED: 'community.purge.finished',
};

export interface EventRow {
  position: string;
  kind: MembershipEventKind;
  user_id: string;
  left_at_ns: string | null;
  rejoined_at_ns: string | null;
  purge_id: string | null;
  recorded_at: Date;
  reason: ConsentReason | null;
  reason_text: string | null;
  policy_version: string | null;
}

/** The message id receivers dedupe by: one per feed event, the same on every retry and replay. */
export function messageId(position: string): string {
  return `msg_${position}`;
}

/** The body: Standard Webhooks' {type, timestamp, data}, data as the feed's change (docs/downstream.md). */
export function webhookBody(event: EventRow): string {
  return JSON.stringify({
    type: EVENT_TYPES[event.kind],
    timestamp: event.recorded_at.toISOString(),
    data: {
      id: event.position,
      cursor: event.position,
      kind: event.kind,
      userId: event.user_id,
      leftAtNs: event.left_at_ns,
      rejoinedAtNs: event.rejoined_at_ns,
      purgeId: event.purge_id,
      // As the feed's `consent`: null where no reason was recorded (purges, changes made in SQL).
      consent: event.reason === null ? null : { reason: event.reason, reasonText: event.reason_text, policyVersion: event.policy_version },
    },
  });
}
