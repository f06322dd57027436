import type { App } from '../../src/app.js';
import { type ReplicatedPostgres, sql } from '../../tooling/replicated-postgres.js';
import { post } from './failover-client.js';

/** Batched signals per second with synchronous_standby_names '*' against '', in alternating rounds; left synchronous. */
export async function replicationCost(
  app: App,
  token: string,
  pair: ReplicatedPostgres,
  sizes: { batchSize: number; batchCallers: number; durationSec: number; rounds: number; warmupSec: number },
) {
  const admin = pair.url('postgres', pair.primaryPort);
  const rates = { synchronous: [] as number[], asynchronous: [] as number[] };
  await batchedRate(app, token, { ...sizes, durationSec: sizes.warmupSec });
  for (let round = 0; round < sizes.rounds; round++) {
    for (const mode of ['synchronous', 'asynchronous'] as const) {
      await sql(admin, `ALTER SYSTEM SET synchronous_standby_names = '${mode === 'synchronous' ? '*' : ''}'`);
      await sql(admin, 'SELECT pg_reload_conf()');
      rates[mode].push(await batchedRate(app, token, sizes));
    }
  }
  await sql(admin, `ALTER SYSTEM SET synchronous_standby_names = '*'`);
  await sql(admin, 'SELECT pg_reload_conf()');
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return { synchronous: mean(rates.synchronous), asynchronous: mean(rates.asynchronous), rounds: sizes.rounds };
}

async function batchedRate(
  app: App,
  token: string,
  sizes: { batchSize: number; batchCallers: number; durationSec: number },
): Promise<number> {
  const query = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { forwarded } }`;
  const deadline = performance.now() + sizes.durationSec * 1000;
  const started = performance.now();
  let signals = 0;
  await Promise.all(
    Array.from({ length: sizes.batchCallers }, async (_, caller) => {
      for (let n = 0; performance.now() < deadline; n++) {
        const inputs = Array.from({ length: sizes.batchSize }, (_, i) => ({
          userId: String(1 + ((caller * 7919 + n * 31 + i) % 5000)),
          itemId: `i-${i % 500}`,
          kind: 'VIEW',
        }));
        const response = await post(app, token, query, { inputs });
        if (response.ok) signals += sizes.batchSize;
      }
    }),
  );
  return signals / ((performance.now() - started) / 1000);
}
