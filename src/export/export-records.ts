import type { PurgeReceipt } from '../purge/purge-jobs.js';
import type { ContributionRow, SignalRow } from './export.store.js';

/** The record types of an export, in the order they come (docs/api.md "Your data to take away"). */
export const RECORD_TYPES = ['status', 'leave', 'rejoin', 'signal', 'contribution', 'purge', 'receipt', 'acknowledgement'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];
export type ExportRecord = { type: RecordType } & Record<string, unknown>;

/** Times on the database clock are nanoseconds as decimal strings (exact past 2^53); ids and weights are strings too. */
export function signalRecord(row: SignalRow): ExportRecord {
  return {
    type: 'signal',
    signalId: row.id,
    itemId: row.item_id,
    kind: row.kind,
    weightMicros: row.weight_micros,
    occurredAt: row.occurred_at?.toISOString() ?? null,
    surface: row.surface,
    cohortIds: row.cohort_ids,
    atNs: row.at_ns,
    forwarded: row.forwarded,
    eventId: row.event_id,
  };
}

export function contributionRecord(row: ContributionRow): ExportRecord {
  return {
    type: 'contribution',
    signalId: row.signal_id,
    cohortId: row.cohort_id,
    itemId: row.item_id,
    weightMicros: row.weight_micros,
    atNs: row.at_ns,
  };
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

export interface AcknowledgementRow {
  id: string;
  purge_id: string;
  subject: string;
  name: string;
  state: string;
  reason: string | null;
  acknowledged_at: Date;
}

export function acknowledgementRecord(row: AcknowledgementRow): ExportRecord {
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
