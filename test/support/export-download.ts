import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { App } from '../../src/app.js';

/** A user's export as tests read it, and the same records read straight from the tables. */

export interface Download {
  status: number;
  contentType: string | null;
  /** Every line but the seal, parsed. */
  records: Record<string, unknown>[];
  seal: Record<string, unknown> & { jws: string; sha256: string };
  /** SHA-256 of the bytes before the seal line, as the reader computes it. */
  sha256: string;
  body: string;
}

export function exportUrl(app: App, userId?: string): URL {
  const url = new URL('/export', app.url);
  if (userId !== undefined) url.searchParams.set('userId', userId);
  return url;
}

export async function download(app: App, bearer: string, userId?: string): Promise<Download> {
  const response = await fetch(exportUrl(app, userId), { headers: { authorization: `Bearer ${bearer}` } });
  const body = await response.text();
  const lines = body.split('\n');
  const last = response.ok ? lines.at(-2)! : '{}';
  const beforeSeal = response.ok ? body.slice(0, body.length - last.length - 1) : '';
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    records: beforeSeal
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line)),
    seal: JSON.parse(last),
    sha256: createHash('sha256').update(beforeSeal).digest('hex'),
    body,
  };
}

/** What the export must hold, in its order, read with plain SQL from the tables themselves. */
export async function expectedRecords(db: pg.Client, userId: string): Promise<Record<string, unknown>[]> {
  const query = async (text: string) => (await db.query(text, [userId])).rows;
  const [membership] = await query(
    `SELECT status, left_at_ns::text AS left, rejoined_at_ns::text AS rejoined FROM community_membership WHERE user_id = $1`,
  );
  const episodes = await query(
    `SELECT left_at_ns::text AS left, rejoined_at_ns::text AS rejoined, left_reason, left_reason_text, left_policy_version,
       rejoined_reason, rejoined_reason_text, rejoined_policy_version FROM leave_episode WHERE user_id = $1 ORDER BY left_at_ns`,
  );
  const signals = await query(`SELECT * FROM signal WHERE user_id = $1 ORDER BY at_ns, id`);
  const community = await query(`SELECT * FROM contribution WHERE user_id = $1 AND cohort_id IS NULL ORDER BY at_ns, signal_id`);
  const cohorts = await query(
    `SELECT * FROM contribution WHERE user_id = $1 AND cohort_id IS NOT NULL ORDER BY at_ns, signal_id, cohort_id`,
  );
  const purges = await query(`SELECT * FROM community_purge WHERE user_id = $1 ORDER BY id`);
  const acks = await query(`SELECT c.*, d.subject, d.name FROM purge_acknowledgement_change c JOIN community_purge p ON p.id = c.purge_id
    JOIN downstream_processor d ON d.id = c.processor_id WHERE p.user_id = $1 ORDER BY c.id`);
  const contribution = (row: any) => ({
    type: 'contribution',
    signalId: row.signal_id,
    cohortId: row.cohort_id,
    itemId: row.item_id,
    weightMicros: row.weight_micros,
    atNs: row.at_ns,
  });
  return [
    {
      type: 'status',
      userId,
      status: membership?.status ?? 'ACTIVE',
      leftAtNs: membership?.left ?? null,
      rejoinedAtNs: membership?.rejoined ?? null,
    },
    ...episodes.flatMap((row) => [
      { type: 'leave', leftAtNs: row.left, consent: consentOf(row.left_reason, row.left_reason_text, row.left_policy_version) },
      ...(row.rejoined === null
        ? []
        : [
            {
              type: 'rejoin',
              leftAtNs: row.left,
              rejoinedAtNs: row.rejoined,
              consent: consentOf(row.rejoined_reason, row.rejoined_reason_text, row.rejoined_policy_version),
            },
          ]),
    ]),
    ...signals.map((row) => ({
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
    })),
    ...community.map(contribution),
    ...cohorts.map(contribution),
    ...purges.map((row) => ({ type: 'purge', purgeId: row.id, status: row.status, boundaryNs: row.boundary_ns, fromNs: row.from_ns })),
    ...episodes.map((row) => ({ type: 'receipt', receipt: 'leave', leftAtNs: row.left })),
    ...purges.map((row) => ({ type: 'receipt', receipt: 'purge', purgeId: row.id })),
    ...acks.map((row) => ({
      type: 'acknowledgement',
      purgeId: row.purge_id,
      processor: row.subject,
      processorName: row.name,
      state: row.state,
      reason: row.reason,
      acknowledgedAt: row.acknowledged_at.toISOString(),
    })),
  ];
}

const consentOf = (reason: string | null, reasonText: string | null, policyVersion: string | null) =>
  reason === null ? null : { reason, reasonText, policyVersion };
