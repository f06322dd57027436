import type { Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../db/schema.js';
import { deliveriesToAttempt, recordFailure, recordSkipped, recordSuccesses } from './delivery.store.js';
import { sendDelivery, type Sender, type Sent } from './send-delivery.js';
import type { SlowLane } from './slow-lane.js';
import { messageId, webhookBody } from './webhook-payload.js';

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'skipped';

export interface DeliveryPolicy {
  retryPeriodMs: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  disableAfterFailures: number;
  disableAfterMs: number;
  slowMs: number;
  probationSuccesses: number;
}

/** Full jitter (AWS' "exponential backoff and jitter"): uniform in [0, min(max, min·2^attempt)]. */
export function retryDelayMs(policy: DeliveryPolicy, attemptsBefore: number): number {
  const ceiling = Math.min(policy.backoffMaxMs, policy.backoffMinMs * 2 ** Math.min(attemptsBefore, 40));
  return Math.max(policy.backoffMinMs / 10, Math.random() * ceiling);
}

/** The next attempt's delay: the backoff, or a 429's or 503's Retry-After when later (at most WEBHOOK_BACKOFF_MAX_MS). */
export function nextAttemptDelayMs(policy: DeliveryPolicy, attemptsBefore: number, retryAfterMs: number | null): number {
  return Math.max(retryDelayMs(policy, attemptsBefore), Math.min(retryAfterMs ?? 0, policy.backoffMaxMs));
}

export interface AttemptContext {
  db: Kysely<Database>;
  policy: DeliveryPolicy;
  sender: Sender;
  /** Enqueues deliveries (in order) in the endpoint's lane at their backoff time, flagged as on probation. */
  retry: (endpointId: string, deliveryIds: string[], at: Date) => Promise<void>;
  /** This attempt disabled the endpoint. */
  onDisabled: (endpointId: string, reason: string) => void;
  /** An attempt failed: what the operator's log keeps (the admin reads only Sent.error). */
  onFailed: (endpointId: string, deliveryId: string, detail: string) => void;
  /** Deliveries settled by an attempt, for the metrics. */
  onOutcome: (outcome: DeliveryOutcome, count: number) => void;
  slowLane: SlowLane;
}

/**
 * One job's deliveries (one endpoint's, in order, in its lane), each signed per Standard Webhooks
 * (webhook-id, webhook-timestamp, webhook-signature, by the `standardwebhooks` package) and POSTed;
 * any 2xx delivers it. Read in one query and the successes recorded in one statement, so a job
 * costs a few commits whatever its size. The first failure ends the job: that delivery and the
 * job's remaining ones wait for its backoff (or the receiver's Retry-After) together, so an endpoint
 * that hangs costs one attempt's timeout per backoff step, never one per delivery. A delivery is
 * FAILED once the retry period (from its first attempt) is over; an endpoint failing too long, or
 * answering 410 Gone, is disabled, and its remaining deliveries skipped (enabling it replays them).
 * An endpoint on probation runs in the slow lane (slow-lane.ts): its jobs are flagged, and not taken
 * while the lane is full (one that finds it full all the same is queued again, flagged, unattempted);
 * a trusted endpoint's attempt still unanswered after WEBHOOK_SLOW_MS joins the lane, or is cut
 * when the lane is full.
 */
export async function attemptDeliveries(context: AttemptContext, deliveryIds: string[]): Promise<void> {
  const rows = (await deliveriesToAttempt(context.db, deliveryIds)).filter((row) => row.status === 'PENDING');
  const first = rows[0];
  if (first === undefined) return;
  const seat = { inLane: false };
  if (first.disabled_at === null && first.fast_successes < context.policy.probationSuccesses) {
    // Queued again, flagged: this instance takes it once its lane has room (another instance may sooner).
    if (!context.slowLane.enter())
      return context.retry(
        first.endpoint_id,
        rows.map((row) => row.id),
        new Date(),
      );
    seat.inLane = true;
  }
  try {
    await attemptInOrder(context, rows, seat);
  } finally {
    if (seat.inLane) context.slowLane.leave();
  }
}

async function attemptInOrder(context: AttemptContext, rows: Attempt[], seat: { inLane: boolean }): Promise<void> {
  const { db, policy } = context;
  const delivered: { id: string; statusCode: number }[] = [];
  let fastSuccesses = rows[0]!.fast_successes;
  for (const [index, row] of rows.entries()) {
    const rest = () => rows.slice(index + 1).map((r) => r.id);
    if (row.disabled_at !== null) {
      await recordSkipped(db, [row.id, ...rest()]);
      context.onOutcome('skipped', rows.length - index);
      break;
    }
    const { sent, fast } = await attempt(context, row, seat);
    if (sent.ok) {
      delivered.push({ id: row.id, statusCode: sent.statusCode });
      fastSuccesses = fast ? fastSuccesses + 1 : 0;
      continue;
    }
    context.onFailed(row.endpoint_id, row.id, sent.detail);
    // Successes first, so this failure counts from a reset failure streak.
    await recordDelivered(context, delivered.splice(0), fastSuccesses);
    const retryAt = new Date(Date.now() + nextAttemptDelayMs(policy, row.attempts, sent.retryAfterMs));
    const final = retryAt.getTime() - row.created_at.getTime() > policy.retryPeriodMs;
    const outcome = await recordFailure(db, {
      id: row.id,
      endpointId: row.endpoint_id,
      statusCode: sent.statusCode,
      error: sent.error,
      final,
      gone: sent.statusCode === 410,
      ...policy,
    });
    // A delivery the disabling leaves unfinished is skipped with the rest, not retried.
    if (final || !outcome.disabled) context.onOutcome(final ? 'failed' : 'retrying', 1);
    if (outcome.disabled) {
      if (outcome.reason !== null) context.onDisabled(row.endpoint_id, outcome.reason);
      const skipped = final ? rest() : [row.id, ...rest()];
      await recordSkipped(db, skipped);
      context.onOutcome('skipped', skipped.length);
    } else await context.retry(row.endpoint_id, final ? rest() : [row.id, ...rest()], retryAt);
    break;
  }
  await recordDelivered(context, delivered, fastSuccesses);
}

/**
 * One POST. Outside the lane, a timer at WEBHOOK_SLOW_MS moves the job into the lane, or cuts the
 * attempt when the lane is full, so a trusted endpoint that starts to hang holds a worker of the
 * other half for at most that long. `fast`: answered 2xx within WEBHOOK_SLOW_MS.
 */
async function attempt(context: AttemptContext, row: Attempt, seat: { inLane: boolean }): Promise<{ sent: Sent; fast: boolean }> {
  const body = webhookBody(row);
  const cut = new AbortController();
  const toLaneOrCut = () => (context.slowLane.enter() ? (seat.inLane = true) : cut.abort());
  const slow = seat.inLane ? null : setTimeout(toLaneOrCut, context.policy.slowMs);
  const started = performance.now();
  try {
    const sent = await sendDelivery(context.sender, row.url, signedHeaders(row, body), body, cut.signal);
    return { sent, fast: performance.now() - started < context.policy.slowMs };
  } finally {
    if (slow) clearTimeout(slow);
  }
}

async function recordDelivered(
  context: AttemptContext,
  delivered: { id: string; statusCode: number }[],
  fastSuccesses: number,
): Promise<void> {
  await recordSuccesses(context.db, delivered, fastSuccesses);
  if (delivered.length > 0) context.onOutcome('delivered', delivered.length);
}

type Attempt = Awaited<ReturnType<typeof deliveriesToAttempt>>[number];

function signedHeaders(row: Attempt, body: string): Record<string, string> {
  const id = messageId(row.position);
  const now = new Date();
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(row.secret).sign(id, now, body),
  };
}
