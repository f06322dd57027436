import type { Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../db/schema.js';
import { messageId, webhookBody } from './webhook-payload.js';
import { deliveriesToAttempt, recordFailure, recordSkipped, recordSuccesses } from './webhook.store.js';

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

type Attempt = NonNullable<Awaited<ReturnType<typeof deliveriesToAttempt>>[number]>;
type Sent = { ok: true; statusCode: number } | { ok: false; statusCode: number | null; error: string };

/**
 * One job's deliveries (one endpoint's, in order), each signed per Standard Webhooks
 * (webhook-id, webhook-timestamp, webhook-signature, by the `standardwebhooks` package) and POSTed
 * with a timeout; any 2xx delivers it. Read in one query and the successes recorded in one
 * statement, so a job costs a few commits whatever its size. A failure is recorded and retried
 * (`retry`, at its backoff time) until the retry period (counted from the first attempt) is over;
 * an endpoint failing `disableAfterFailures` times in a row is disabled, and its remaining
 * deliveries skipped.
 */
export async function attemptDeliveries(
  db: Kysely<Database>,
  deliveryIds: string[],
  policy: DeliveryPolicy,
  retry: (deliveryId: string, at: Date) => Promise<void>,
): Promise<void> {
  const delivered: { id: string; statusCode: number }[] = [];
  const disabled = new Set<string>();
  // Successes first, so a failure after them counts from a reset failure streak.
  const flush = async () => void (await recordSuccesses(db, delivered.splice(0)));
  for (const row of await deliveriesToAttempt(db, deliveryIds)) {
    if (row.status !== 'PENDING') continue;
    if (row.disabled_at !== null || disabled.has(row.endpoint_id)) {
      await recordSkipped(db, row.id);
      continue;
    }
    const sent = await send(row, policy);
    if (sent.ok) {
      delivered.push({ id: row.id, statusCode: sent.statusCode });
      continue;
    }
    await flush();
    const retryAt = new Date(Date.now() + retryDelayMs(policy, row.attempts));
    const final = retryAt.getTime() - row.created_at.getTime() > policy.retryPeriodMs;
    const nowDisabled = await recordFailure(db, { id: row.id, endpointId: row.endpoint_id, statusCode: sent.statusCode, error: sent.error, final, disableAfter: policy.disableAfterFailures });
    if (final) continue;
    if (nowDisabled) {
      disabled.add(row.endpoint_id);
      await recordSkipped(db, row.id);
    } else await retry(row.id, retryAt);
  }
  await flush();
}

async function send(row: Attempt, policy: DeliveryPolicy): Promise<Sent> {
  const body = webhookBody(row);
  const id = messageId(row.position);
  const now = new Date();
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
    if (response.status >= 200 && response.status < 300) return { ok: true, statusCode: response.status };
    return { ok: false, statusCode: response.status, error: `HTTP ${response.status}` };
  } catch (cause) {
    const error = cause instanceof Error ? `${cause.name}: ${(cause.cause as Error | undefined)?.message ?? cause.message}` : String(cause);
    return { ok: false, statusCode: null, error };
  }
}
