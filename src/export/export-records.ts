import { toConsent } from '../membership/consent.js';
import type { LeaveEpisodeRow } from '../membership/membership-export.store.js';
import type { AcknowledgementChangeRow } from '../purge/acknowledgement.store.js';
import type { PurgeReceipt } from '../purge/purge-jobs.js';

/** The record types of an export, in the order they come (docs/api.md "Your data to take away"). */
export const RECORD_TYPES = ['status', 'leave', 'rejoin', 'signal', 'contribution', 'purge', 'receipt', 'acknowledgement'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];
export type ExportRecord = { type: RecordType } & Record<string, unknown>;

/**
 * Records built in Node (the few per user); signals and contributions, the many, come as lines
 * PostgreSQL builds (src/signals/signal-export.store.ts). Times on the database clock are
 * nanoseconds as decimal strings (exact past 2^53); ids and weights are strings too.
 */
export function leaveRecords(row: LeaveEpisodeRow): ExportRecord[] {
  const leave: ExportRecord = {
    type: 'leave',
    leftAtNs: row.left_at_ns,
    consent: toConsent(row.left_reason, row.left_reason_text, row.left_policy_version),
  };
  if (row.rejoined_at_ns === null) return [leave];
  const rejoin: ExportRecord = {
    type: 'rejoin',
    leftAtNs: row.left_at_ns,
    rejoinedAtNs: row.rejoined_at_ns,
    consent: toConsent(row.rejoined_reason, row.rejoined_reason_text, row.rejoined_policy_version),
  };
  return [leave, rejoin];
}

export function purgeRecord(purge: PurgeReceipt): ExportRecord {
  return {
    type: 'purge',
    purgeId: purge.purgeId,
    status: purge.status,
    boundaryNs: purge.boundaryNs,
    fromNs: purge.fromNs,
    requestedAtNs: String(purge.requestedAtNs),
    finishedAtNs: purge.finishedAtNs === null ? null : String(purge.finishedAtNs),
    removedEntries: purge.removedSoFar,
    chunks: purge.chunks,
    targets: purge.targets.map(({ target, entries, weight }) => ({ target, entries, weight })),
  };
}

export function acknowledgementRecord(row: AcknowledgementChangeRow): ExportRecord {
  return {
    type: 'acknowledgement',
    purgeId: row.purge_id,
    processor: row.subject,
    processorName: row.name,
    state: row.state,
    reason: row.reason,
    acknowledgedAt: row.acknowledged_at.toISOString(),
  };
}
