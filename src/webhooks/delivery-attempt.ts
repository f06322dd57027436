import type { Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../db/schema.js';
import { deliveriesToAttempt, recordFailure, recordSkipped, recordSuccesses } from './delivery.store.js';
import { sendDelivery, type Sender } from './send-delivery.js';
import { messageId, webhookBody } from './webhook-payload.js';

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'skipped';

export interface DeliveryPolicy {
  retryPeriodMs: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  disableAfterFailures: number;
  disableAfterMs: number;
}

/** Full jitter (AWS' "exponential backoff and jitter"): uniform in [0, min(max, min·2^attempt)]. */
export function retryDelayMs(policy: DeliveryPolicy, attemptsBefore: number): number {
  const ceiling = Math.min(policy.backoffMaxMs, policy.backoffMinMs * 2 ** Math.min(attemptsBefore, 40));
  return Math.max(policy.backoffMinMs / 10, Math.random() * ceiling);
}

export interface AttemptContext {
  db: Kysely<Database>;
  policy: DeliveryPolicy;
  sender: Sender;
  /** Enqueues deliveries (in order) in the endpoint's lane at their backoff time. */
  retry: (endpointId: string, deliveryIds: string[], at: Date) => Promise<void>;
  /** This attempt disabled the endpoint. */
  onDisabled: (endpointId: string, reason: string) => void;
  /** Deliveries settled by an attempt, for the metrics. */
  onOutcome: (outcome: DeliveryOutcome, count: number) => void;
  /** The instance's workers now attempting failing endpoints, and how many may (a fair share: half of them). */
  failingShare: { running: number; max: number };
}

/**
 * One job's deliveries (one endpoint's, in order, in its lane), each signed per Standard Webhooks
 * (webhook-id, webhook-timestamp, webhook-signature, by the `standardwebhooks` package) and POSTed;
 * any 2xx delivers it. Read in one query and the successes recorded in one statement, so a job
 * costs a few commits whatever its size. The first failure ends the job: that delivery and the
 * job's remaining ones wait for its backoff together, so an endpoint that hangs costs one attempt's
 * timeout per backoff step, never one per delivery. A delivery is FAILED once the retry period
 * (from its first attempt) is over; an endpoint failing too long is disabled, and its remaining
 * deliveries skipped (enabling it replays them). Endpoints that are failing share at most half the
 * instance's workers: a job of one that finds them taken waits WEBHOOK_BACKOFF_MIN_MS, unattempted.
 */
export async function attemptDeliveries(context: AttemptContext, deliveryIds: string[]): Promise<void> {
  const rows = (await deliveriesToAttempt(context.db, deliveryIds)).filter((row) => row.status === 'PENDING');
  const first = rows[0];
  const share = context.failingShare;
  if (first === undefined) return;
  if (first.failing_since === null || first.disabled_at !== null) return attemptInOrder(context, rows);
  // An endpoint that is failing gets a worker only while failing ones hold less than their share: the rest serve healthy endpoints.
  if (share.running >= share.max) return context.retry(first.endpoint_id, rows.map((row) => row.id), new Date(Date.now() + context.policy.backoffMinMs));
  share.running++;
  try {
    await attemptInOrder(context, rows);
  } finally {
    share.running--;
  }
}

async function attemptInOrder(context: AttemptContext, rows: Attempt[]): Promise<void> {
  const { db, policy } = context;
  const delivered: { id: string; statusCode: number }[] = [];
  for (const [index, row] of rows.entries()) {
    const rest = () => rows.slice(index + 1).map((r) => r.id);
    if (row.disabled_at !== null) {
      await recordSkipped(db, [row.id, ...rest()]);
      context.onOutcome('skipped', rows.length - index);
      break;
    }
    const body = webhookBody(row);
    const sent = await sendDelivery(context.sender, row.url, signedHeaders(row, body), body);
    if (sent.ok) {
      delivered.push({ id: row.id, statusCode: sent.statusCode });
      continue;
    }
    // Successes first, so this failure counts from a reset failure streak.
    await recordDelivered(context, delivered.splice(0));
    const retryAt = new Date(Date.now() + retryDelayMs(policy, row.attempts));
    const final = retryAt.getTime() - row.created_at.getTime() > policy.retryPeriodMs;
    const outcome = await recordFailure(db, { id: row.id, endpointId: row.endpoint_id, statusCode: sent.statusCode, error: sent.error, final, ...policy });
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
  await recordDelivered(context, delivered);
}

async function recordDelivered(context: AttemptContext, delivered: { id: string; statusCode: number }[]): Promise<void> {
  await recordSuccesses(context.db, delivered);
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
