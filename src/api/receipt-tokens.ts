import type { ReceiptSigner } from '../auth/receipt-signer.js';
import type { Consent } from '../membership/memberships.js';
import type { PurgeReceipt } from '../purge/purge-jobs.js';
import { formatRfc3339 } from '../time/rfc3339.js';

/**
 * What a signed receipt says (docs/downstream.md "Receipts"). Times are nanoseconds on the
 * database clock as decimal strings (exact past 2^53), with the RFC 3339 form beside them.
 */

/** The receipt of a leave: its id names the user and the boundary, which never moves once recorded. */
export function leaveReceiptId(userId: string, leftAtNs: string): string {
  return `leave:${userId}:${leftAtNs}`;
}

/** With the leave's reason, text and policy version when they were recorded (absent otherwise, as before reasons). */
export function signLeaveReceipt(signer: ReceiptSigner, userId: string, leftAtNs: string, consent: Consent | null): Promise<string | null> {
  return signer.sign(leaveReceiptId(userId, leftAtNs), userId, {
    receipt: 'leave',
    userId,
    leftAtNs,
    leftAt: formatRfc3339(BigInt(leftAtNs)),
    ...(consent ? { reason: consent.reason, reasonText: consent.reasonText, policyVersion: consent.policyVersion } : {}),
  });
}

export function signPurgeReceipt(signer: ReceiptSigner, purge: PurgeReceipt): Promise<string | null> {
  return signer.sign(`purge:${purge.purgeId}`, purge.userId, {
    receipt: 'purge',
    userId: purge.userId,
    purgeId: purge.purgeId,
    status: purge.status,
    boundaryNs: purge.boundaryNs,
    fromNs: purge.fromNs,
    requestedAt: formatRfc3339(purge.requestedAtNs),
    finishedAt: purge.finishedAtNs === null ? null : formatRfc3339(purge.finishedAtNs),
    removedEntries: purge.removedSoFar,
  });
}
