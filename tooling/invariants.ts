import type pg from 'pg';

/** I3: every aggregate (all shards summed) equals the sum over the contributions ledger. */
export async function aggregateMismatches(db: pg.Client): Promise<unknown[]> {
  const { rows } = await db.query(`
    WITH ledger AS (
      SELECT coalesce(cohort_id, '') AS target, item_id, count(*) AS n, sum(weight_micros) AS w
        FROM contribution GROUP BY 1, 2
    ), aggregate AS (
      SELECT '' AS target, item_id, sum(signal_count) AS n, sum(weight_micros_sum) AS w
        FROM community_item_aggregate GROUP BY 1, 2
      UNION ALL
      SELECT cohort_id, item_id, sum(signal_count), sum(weight_micros_sum)
        FROM cohort_item_aggregate GROUP BY 1, 2
    )
    -- An aggregate whose entries were all purged sums to 0 over an empty ledger: equal.
    SELECT target, item_id, l.n AS ledger_count, a.n AS aggregate_count, l.w AS ledger_weight, a.w AS aggregate_weight
      FROM ledger l FULL JOIN aggregate a USING (target, item_id)
     WHERE coalesce(l.n, 0) <> coalesce(a.n, 0) OR coalesce(l.w, 0) <> coalesce(a.w, 0)`);
  return rows;
}

export interface Operation {
  kind: 'leave' | 'rejoin' | 'signal';
  userId: string;
  instance: number;
  /** Client-side monotonic times around the HTTP request. */
  start: number;
  end: number;
  ok: boolean;
  signalId?: string;
  forwarded?: boolean;
  cohortsAttributed?: number;
}

/**
 * I1: no contribution has at_ns inside one of its user's leave windows [left, rejoined).
 * I2: a signal whose request started after a leave response arrived, with no rejoin request of
 *     that user overlapping the time between them, was not forwarded.
 * Plus: every acknowledged signal is stored exactly as reported.
 */
export async function boundaryViolations(db: pg.Client, operations: Operation[]): Promise<string[]> {
  const violations: string[] = [];
  const { rows: inside } = await db.query(`
    SELECT c.signal_id, coalesce(c.cohort_id, 'community') AS target, c.user_id::text, c.at_ns::text, e.left_at_ns::text, e.rejoined_at_ns::text
      FROM contribution c JOIN leave_episode e ON e.user_id = c.user_id
     WHERE c.at_ns >= e.left_at_ns AND (e.rejoined_at_ns IS NULL OR c.at_ns < e.rejoined_at_ns)`);
  for (const row of inside)
    violations.push(
      `I1: contribution of signal ${row.signal_id} to ${row.target} of user ${row.user_id} at ${row.at_ns} inside [${row.left_at_ns}, ${row.rejoined_at_ns})`,
    );

  const byUser = new Map<string, Operation[]>();
  for (const op of operations) {
    if (!op.ok) continue;
    byUser.set(op.userId, [...(byUser.get(op.userId) ?? []), op]);
  }
  for (const ops of byUser.values()) {
    const leaves = ops.filter((op) => op.kind === 'leave');
    const rejoins = ops.filter((op) => op.kind === 'rejoin');
    for (const signal of ops.filter((op) => op.kind === 'signal' && op.forwarded)) {
      const fence = leaves.find(
        (leave) => leave.end < signal.start && !rejoins.some((rejoin) => rejoin.start < signal.end && rejoin.end > leave.start),
      );
      if (fence) {
        violations.push(
          `I2: signal ${signal.signalId} of user ${signal.userId} on instance ${signal.instance} forwarded after a leave returned`,
        );
      }
    }
  }

  const acknowledged = operations.filter((op) => op.kind === 'signal' && op.ok);
  const { rows: stored } = await db.query(
    `WITH targets AS (
       SELECT signal_id, count(*) FILTER (WHERE cohort_id IS NOT NULL)::int AS cohorts,
              count(*) FILTER (WHERE cohort_id IS NULL)::int AS community
         FROM contribution WHERE signal_id = ANY($1::bigint[]) GROUP BY signal_id)
     SELECT s.id::text, s.forwarded, coalesce(t.cohorts, 0) AS cohorts, coalesce(t.community, 0) AS community
       FROM signal s LEFT JOIN targets t ON t.signal_id = s.id
      WHERE s.id = ANY($1::bigint[])`,
    [acknowledged.map((op) => op.signalId)],
  );
  const byId = new Map(stored.map((row) => [row.id, row]));
  for (const op of acknowledged) {
    const row = byId.get(op.signalId!);
    if (!row) violations.push(`stored: acknowledged signal ${op.signalId} is missing`);
    else if (row.forwarded !== op.forwarded || row.cohorts !== op.cohortsAttributed || row.community !== (op.forwarded ? 1 : 0)) {
      violations.push(`stored: signal ${op.signalId} differs from its response`);
    }
  }
  return violations;
}
