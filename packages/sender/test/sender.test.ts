import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { SEND_SIGNALS } from '../src/batch-request.js';
import { Sender, type Outcome, type Signal } from '../src/index.js';
import type { Manifest } from '../../../src/graphql/trusted-documents/manifest.js';
import { FaultHttpProxy, type Fault } from '../../../test/support/fault-http-proxy.js';
import { startCluster, token, type Cluster } from '../../../test/support/harness.js';

/** Through a fault-injecting proxy: 503 storms with Retry-After, 429, replies dropped after the server committed. */
const SIGNALS = 50_000;
const plan = (request: number): Fault => {
  if (request >= 5 && request <= 9) return { status: 503, retryAfter: '0' }; // a storm
  if (request === 2) return { status: 503, retryAfter: '1' };
  if (request % 13 === 0) return { status: 429, retryAfter: '0' };
  if (request % 7 === 0) return 'cut-after-reply';
  return 'pass';
};
/** Invalid by the server's rules (answered item by item) and by GraphQL's coercion (the call refused). */
const badItem = (i: number) => i % 997 === 500;
const badTime = (i: number) => i % 1499 === 700;

let cluster: Cluster;
let proxy: FaultHttpProxy;
let url: string;

beforeAll(async () => {
  // Faults, not budgets: 50,000 signals from one token would spend its budget (the sender's answer
  // to 429 is checked in test/fair-share.test.ts).
  cluster = await startCluster([{}], 'direct', { FAIR_SHARE: 'false' });
  proxy = new FaultHttpProxy(cluster.apps[0]!.url, plan);
  url = await proxy.start();
});

afterAll(async () => {
  await proxy?.close();
  await cluster?.stop();
});

function signal(i: number): Signal {
  return {
    userId: String(1000 + (i % 200)),
    itemId: badItem(i) ? `bad\u0007${i}` : `item-${i % 500}`,
    kind: 'VIEW',
    eventId: `ev-${i}`,
    ...(badTime(i) ? { occurredAt: 'not-a-date' } : {}),
  };
}

describe('the sender library against the real server, through faults', () => {
  it('sends the document the server trusts (trusted-documents.json), so it runs in only mode too', async () => {
    const manifest = JSON.parse(await readFile(new URL('../../../trusted-documents.json', import.meta.url), 'utf8')) as Manifest;
    expect(manifest.operations.find((operation) => operation.name === 'SenderSendSignals')?.body).toBe(SEND_SIGNALS);
  });

  it(`${SIGNALS} signals, some invalid: each valid one stored exactly once, each invalid one reported and never resent`, async () => {
    const sender = new Sender({
      url,
      token: await token('1', 'signals:write', '1h'),
      maxBatchSize: 1000,
      backoffMs: { initial: 10, max: 200 },
    });
    const outcomes: Promise<Outcome>[] = [];
    for (let i = 0; i < SIGNALS; i++) {
      outcomes.push(sender.send(signal(i)));
      // Back-pressure the way a caller would: let the buffer drain when it is near full.
      if (outcomes.length % 5000 === 0) await sender.flush();
    }
    await sender.close();
    const results = await Promise.all(outcomes);

    const invalid = results.filter((outcome) => outcome.result === 'invalid');
    const expectedInvalid = Array.from({ length: SIGNALS }, (_, i) => i).filter((i) => badItem(i) || badTime(i));
    expect(invalid.map((outcome) => outcome.eventId).sort()).toEqual(expectedInvalid.map((i) => `ev-${i}`).sort());
    for (const outcome of invalid)
      expect(outcome).toMatchObject({
        argument: expect.stringMatching(/^inputs\[\d+\]\.(itemId|occurredAt)$/),
        reason: expect.any(String),
      });
    expect(results.filter((outcome) => outcome.result === 'failed')).toEqual([]);
    const duplicates = results.filter((outcome) => outcome.result === 'duplicate').length;
    expect(duplicates).toBeGreaterThan(0); // the cut replies' signals, resent and recognised

    const { rows } = await cluster.db.query<{ n: string; distinct_events: string; invalid: string }>(
      `SELECT count(*) AS n, count(DISTINCT (user_id, event_id)) AS distinct_events,
              count(*) FILTER (WHERE event_id = ANY($1)) AS invalid FROM signal`,
      [expectedInvalid.map((i) => `ev-${i}`)],
    );
    expect(rows[0]).toEqual({
      n: String(SIGNALS - expectedInvalid.length),
      distinct_events: String(SIGNALS - expectedInvalid.length),
      invalid: '0',
    });

    // Never resent once reported: after the reply that named it invalid, no request carries it.
    const reported = new Set<string>();
    for (const request of proxy.forwarded) {
      const inputs = (JSON.parse(request.body) as { variables: { inputs: Signal[] } }).variables.inputs;
      const reply = JSON.parse(request.reply) as {
        data?: { sendSignals: { items: { argument?: string }[] } };
        errors?: { extensions?: { argument?: string } }[];
      };
      inputs.forEach((input, index) => {
        expect(reported.has(input.eventId!), `${input.eventId} resent after it was reported invalid`).toBe(false);
        const named =
          reply.data?.sendSignals.items[index]?.argument !== undefined ||
          (reply.errors ?? []).some((error) => error.extensions?.argument?.startsWith(`inputs[${index}].`));
        if (request.delivered && named) reported.add(input.eventId!);
      });
    }
    expect(reported.size).toBe(expectedInvalid.length);
    expect(proxy.forwarded.some((request) => !request.delivered)).toBe(true);
  }, 300_000);
});
