import type { ChildProcess } from 'node:child_process';
import { afterAll, expect, it } from 'vitest';
import type { EmbeddedDatabase } from '../tooling/postgres/embedded.js';
import { startTemporaryPostgres } from '../tooling/postgres/temporary-postgres.js';
import { withTimeout } from '../src/util/with-timeout.js';
import { eventually, sqlClient, startServer, token } from './support/harness.js';
import type { ServerProcess } from '../tooling/server-process.js';

const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { signalId } }`;
const OUTAGE_MS = 5_000;

interface Instance {
  server: ServerProcess;
  child: ChildProcess;
  url: string;
  acknowledged: string[];
  retryable: number;
  /** Anything but a success or a 503 with Retry-After: must stay empty. */
  unexpected: string[];
  /** Readiness as polled, consecutive repeats folded. */
  readiness: number[];
}

/** A server process of its own that nothing supervises: if it dies, it stays dead. */
async function spawnServer(databaseUrl: string): Promise<Instance> {
  const server = await startServer(databaseUrl, {
    // A new database: both instances migrate it at start, under the migration lock.
    MIGRATE_ON_START: 'true',
    LISTENER_HEARTBEAT_MS: '500',
    LISTENER_BACKOFF_MAX_MS: '500',
    DB_ACQUIRE_TIMEOUT_MS: '1000',
    // An outage, not budgets: one token sends back to back from many clients (fair share has its own tests).
    FAIR_SHARE: 'false',
  });
  return { server, child: server.child, url: server.url, acknowledged: [], retryable: 0, unexpected: [], readiness: [] };
}

let database: EmbeddedDatabase | undefined;
const instances: Instance[] = [];

afterAll(async () => {
  for (const instance of instances) await instance.server.stop('SIGTERM');
  await database?.stop();
});

it('a PostgreSQL restart and a 5 s outage under load: both processes survive, clients see only successes or 503 with Retry-After, nothing acknowledged is lost', async () => {
  database = await startTemporaryPostgres('outage');
  instances.push(...(await withTimeout(Promise.all([spawnServer(database.url), spawnServer(database.url)]), 120_000)));
  const bearer = await token('1', 'signals:write');
  let running = true;

  const sendBackToBack = async (instance: Instance, client: number) => {
    for (let i = 0; running; i++) {
      try {
        const response = await fetch(instance.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
          body: JSON.stringify({ query: SIGNAL, variables: { input: { userId: String(client), itemId: `o-${i}`, kind: 'VIEW' } } }),
          // A request the server never answers is a failure to report, not a reason to hang.
          signal: AbortSignal.timeout(60_000),
        });
        const body = (await response.json()) as { data?: { signal?: { signalId: string } }; errors?: { extensions?: { code?: string } }[] };
        const code = body.errors?.[0]?.extensions?.code;
        if (response.status === 200 && body.data?.signal) instance.acknowledged.push(body.data.signal.signalId);
        else if (
          response.status === 503 &&
          response.headers.get('retry-after') &&
          (code === 'SERVICE_UNAVAILABLE' || code === 'OVERLOADED')
        ) {
          instance.retryable++;
          // A polite client backs off a little before retrying.
          await new Promise((resolve) => setTimeout(resolve, 20));
        } else instance.unexpected.push(`${response.status} ${JSON.stringify(body)}`);
      } catch (error) {
        instance.unexpected.push(String(error));
        return;
      }
    }
  };
  const pollReadiness = async (instance: Instance) => {
    while (running) {
      const status = await fetch(new URL('/readyz', instance.url))
        .then((response) => response.status)
        .catch(() => 0);
      if (instance.readiness.at(-1) !== status) instance.readiness.push(status);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const load = [
    ...instances.flatMap((instance, n) => [sendBackToBack(instance, 2 * n + 1), sendBackToBack(instance, 2 * n + 2)]),
    ...instances.map(pollReadiness),
  ];
  const state = () =>
    JSON.stringify(
      instances.map((instance) => ({
        acknowledged: instance.acknowledged.length,
        retryable: instance.retryable,
        unexpected: instance.unexpected.slice(0, 3),
        readiness: instance.readiness,
        exit: [instance.child.exitCode, instance.child.signalCode],
        // What a process that died said last: the reason it gave.
        ...(instance.child.exitCode !== null ? { lastOutput: instance.server.text.slice(-2_000) } : {}),
      })),
    );
  const until = (what: string, check: () => boolean) =>
    eventually(check, 60_000).catch(() => {
      throw new Error(`${what} did not happen; instances: ${state()}`);
    });
  const moreAcknowledged = async (what: string, count: number) => {
    const targets = instances.map((instance) => instance.acknowledged.length + count);
    await until(what, () => instances.every((instance, n) => instance.acknowledged.length >= targets[n]!));
  };

  // Each step has a deadline of its own, so a hang says where it happened.
  const step = <T>(what: string, work: Promise<T>) =>
    withTimeout(work, 60_000).catch((error: unknown) => {
      throw new Error(`${what}: ${String(error)}; instances: ${state()}`);
    });
  await moreAcknowledged('30 signals acknowledged by each instance before the restart', 30);
  await step('stopping PostgreSQL for the restart', database.pause());
  await step('starting PostgreSQL again', database.resume());
  await moreAcknowledged('30 more after the restart', 30);

  await step('stopping PostgreSQL for the outage', database.pause());
  const refusedBefore = instances.map((instance) => instance.retryable);
  const outage = new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
  await until('not ready and a 503 on each instance during the outage', () =>
    instances.every((instance, n) => instance.readiness.at(-1) === 503 && instance.retryable > refusedBefore[n]!),
  );
  await outage;
  await step('starting PostgreSQL after the outage', database.resume());
  await moreAcknowledged('30 more after the outage', 30);
  await until('ready again', () => instances.every((instance) => instance.readiness.at(-1) === 200));
  running = false;
  await step('the clients finishing', Promise.all(load));

  for (const instance of instances) {
    expect(instance.child.exitCode).toBeNull();
    expect(instance.child.signalCode).toBeNull();
    expect(instance.unexpected).toEqual([]);
    expect(instance.retryable).toBeGreaterThan(0);
    // Ready, then not ready during the outage, then ready again.
    expect(instance.readiness.slice(0, 1)).toEqual([200]);
    expect(instance.readiness).toContain(503);
    expect(instance.readiness.at(-1)).toBe(200);
  }
  const db = await sqlClient(database.url);
  try {
    const acknowledged = instances.flatMap((instance) => instance.acknowledged);
    const { rows } = await db.query('SELECT count(*)::int AS n FROM signal WHERE id = ANY($1::bigint[])', [acknowledged]);
    expect(rows[0].n).toBe(acknowledged.length);
  } finally {
    await db.end();
  }
}, 300_000);
