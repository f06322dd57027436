import type { Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../db/schema.js';
import { messageId, webhookBody } from './webhook-payload.js';
import { deliveryToAttempt, recordFailure, recordSkipped, recordSuccess } from './webhook.store.js';

export interface DeliveryPolicy {
  retryPeriodMs: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  timeoutMs: number;
  disableAfterFailures: number;
}

/** Full jitter (AWS' "exponential backoff and jitter"): uniform in [0, min(max, min·2^attempt)]. */
export function retryDelayMs(policy: DeliveryPolicy, attemptsBefore: number): number {
  const ceiling = Math.min(policy.backoffMaxMs, policy.backoffMinMs * 2 ** Math.min(attemptsBefore, 40));
  return Math.max(policy.backoffMinMs / 10, Math.random() * ceiling);
}

/** What happened: delivered, given up, or to be tried again at `retryAt`. */
export type AttemptOutcome = { kind: 'done' } | { kind: 'retry'; retryAt: Date };

/**
 * One attempt of one delivery: signed per Standard Webhooks (webhook-id, webhook-timestamp,
 * webhook-signature, by the `standardwebhooks` package), POSTed with a timeout; any 2xx delivers
 * it. A failure is recorded and retried with backoff until the retry period (counted from the
 * first attempt) is over; an endpoint failing `disableAfterFailures` times in a row is disabled.
 */
export async function attemptDelivery(db: Kysely<Database>, deliveryId: string, policy: DeliveryPolicy): Promise<AttemptOutcome> {
  const row = await deliveryToAttempt(db, deliveryId);
  if (!row || row.status !== 'PENDING') return { kind: 'done' };
  if (row.disabled_at !== null) {
    await recordSkipped(db, deliveryId);
    return { kind: 'done' };
  }
  const body = webhookBody(row);
  const id = messageId(row.position);
  const now = new Date();
  let statusCode: number | null = null;
  let error: string;
  try {
    const response = await fetch(row.url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(policy.timeoutMs),
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': new Webhook(row.secret).sign(id, now, body),
      },
      body,
    });
    await response.body?.cancel();
    statusCode = response.status;
    if (response.status >= 200 && response.status < 300) {
      await recordSuccess(db, deliveryId, row.endpoint_id, response.status);
      return { kind: 'done' };
    }
    error = `HTTP ${response.status}`;
  } catch (cause) {
    error = cause instanceof Error ? `${cause.name}: ${(cause.cause as Error | undefined)?.message ?? cause.message}` : String(cause);
  }
  const retryAt = new Date(Date.now() + retryDelayMs(policy, row.attempts));
  const final = retryAt.getTime() - row.created_at.getTime() > policy.retryPeriodMs;
  const disabled = await recordFailure(db, { id: deliveryId, endpointId: row.endpoint_id, statusCode, error, final, disableAfter: policy.disableAfterFailures });
  if (final) return { kind: 'done' };
  if (disabled) {
    await recordSkipped(db, deliveryId);
    return { kind: 'done' };
  }
  return { kind: 'retry', retryAt };
}
