import { fork } from 'node:child_process';
import pg from 'pg';
import { summarize } from './stats.js';

export interface HttpLoadOptions {
  url: string;
  token: string;
  /** Sent in turn, one per request, across all connections. */
  bodies: string[];
  connections: number;
  durationSec: number;
  /** Replace every EVENT_ID_SLOT in a body with a fresh UUID per request, so no retry is ever measured. */
  freshEventIds?: boolean;
}

/** One load run as measured; `latenciesMs` has one entry per successful request (or query). */
export interface LoadSample {
  requests: number;
  failed: number;
  firstFailure: string | null;
  durationSec: number;
  latenciesMs: number[];
}

export interface LoadResult {
  requests: number;
  failed: number;
  firstFailure: string | null;
  durationSec: number;
  perSecond: number;
  /** perSecond of each round, to show how steady the machine was. */
  perSecondByRound: number[];
  p50Ms: number;
  p99Ms: number;
}

/** Autocannon for a fixed duration, in a child process (tsx cannot load TypeScript in worker threads on Node 20). */
export function httpLoad(options: HttpLoadOptions): Promise<LoadSample> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL('./load-client.ts', import.meta.url), [], { serialization: 'advanced' });
    let sample: LoadSample | null = null;
    child.once('message', (message) => (sample = message as LoadSample));
    child.once('error', reject);
    child.once('exit', (code) => (sample ? resolve(sample) : reject(new Error(`load client exited with ${code} and no result`))));
    child.send(options);
  });
}

/** Samples of load runs that ran at the same time (one per server process) as one. */
export function mergeSamples(samples: LoadSample[]): LoadSample {
  return {
    requests: samples.reduce((sum, sample) => sum + sample.requests, 0),
    failed: samples.reduce((sum, sample) => sum + sample.failed, 0),
    firstFailure: samples.find((sample) => sample.firstFailure)?.firstFailure ?? null,
    durationSec: Math.max(...samples.map((sample) => sample.durationSec)),
    latenciesMs: samples.flatMap((sample) => sample.latenciesMs),
  };
}

export interface PgLoadOptions {
  url: string;
  clients: number;
  durationSec: number;
  /** The next statement to run; each client runs one at a time until the duration is over. */
  next(): pg.QueryConfig;
}

/** The database ceiling: plain pg clients, one statement in flight each, same duration. */
export async function pgLoad(options: PgLoadOptions): Promise<LoadSample> {
  const clients = await Promise.all(
    Array.from({ length: options.clients }, async () => {
      const client = new pg.Client({ connectionString: options.url });
      await client.connect();
      return client;
    }),
  );
  const latenciesMs: number[] = [];
  const started = performance.now();
  const deadline = started + options.durationSec * 1000;
  try {
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < deadline) {
          const before = performance.now();
          await client.query(options.next());
          latenciesMs.push(performance.now() - before);
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
  return { requests: latenciesMs.length, failed: 0, firstFailure: null, durationSec: (performance.now() - started) / 1000, latenciesMs };
}

/**
 * Runs each arm in turn, `rounds` times (A B A B …), so slow drifts and bursts of other work on the
 * machine fall on every arm alike; returns one result per arm over all its rounds. Any failed
 * request stops the case: it would have measured something else.
 */
export async function interleave<const Arms extends readonly (() => Promise<LoadSample>)[]>(
  arms: Arms,
  rounds: number,
): Promise<{ -readonly [K in keyof Arms]: LoadResult }> {
  const samples: LoadSample[][] = arms.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, arm] of arms.entries()) samples[i]!.push(await arm());
  }
  const results = samples.map((runs): LoadResult => {
    const requests = runs.reduce((sum, run) => sum + run.requests, 0);
    const failed = runs.reduce((sum, run) => sum + run.failed, 0);
    const firstFailure = runs.find((run) => run.firstFailure)?.firstFailure ?? null;
    if (failed > 0 || requests === 0) throw new Error(`load run: ${failed} failed, ${requests} ok; first failure: ${firstFailure}`);
    const durationSec = runs.reduce((sum, run) => sum + run.durationSec, 0);
    const { p50, p99 } = summarize(runs.flatMap((run) => run.latenciesMs));
    const perSecondByRound = runs.map((run) => run.requests / run.durationSec);
    return { requests, failed, firstFailure, durationSec, perSecond: requests / durationSec, perSecondByRound, p50Ms: p50, p99Ms: p99 };
  });
  return results as { -readonly [K in keyof Arms]: LoadResult };
}
