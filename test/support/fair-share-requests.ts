import type pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import type { App } from '../../src/app.js';
import { type Cluster, startCluster, token } from './harness.js';

/** Fair share's test budgets and requests (test/fair-share*.test.ts): answers with their budget headers and extensions. */

/** Small budgets, so a test spends them in a few requests (a refill of 1 point a second). */
export const BUDGETS = {
  FAIR_SHARE_USER_CAPACITY: '20',
  FAIR_SHARE_USER_RATE: '1',
  FAIR_SHARE_MEMBERSHIP_CHANGES: '3',
  FAIR_SHARE_MEMBERSHIP_WINDOW_SECONDS: '3600',
  FAIR_SHARE_INSTANCES: '2',
  FAIR_SHARE_SERVICES: 'big-service=1000/10,small-sender=20/20',
  FAIR_SHARE_ANONYMOUS_CAPACITY: '5',
  FAIR_SHARE_ANONYMOUS_RATE: '1',
};

export async function post(app: App, bearer: string, query: string, variables?: Record<string, unknown>) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as {
    data?: Record<string, any> | null;
    errors?: { extensions?: Record<string, any> }[];
    extensions?: Record<string, any>;
  };
  return { status: response.status, headers: response.headers, ...body };
}

export const SIGNAL = 'mutation ($input: SignalInput!) { signal(input: $input) { signalId } }';
export const SIGNALS = 'mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId } }';
export const signal = (userId: string, i: number) => ({ userId, itemId: `fair-${i}`, kind: 'VIEW' as const });
/** Sends single signals, round robin over `apps`, until one is refused; returns how many got in and the refusal. */
export async function floodUntilRefused(apps: App[], userId: string) {
  const bearer = await token(userId);
  let admitted = 0;
  for (let i = 0; i < 200; i++) {
    const response = await post(apps[i % apps.length]!, bearer, SIGNAL, { input: signal(userId, i) });
    if (response.status === 429) return { admitted, refusal: response };
    expect(response.status).toBe(200);
    admitted++;
  }
  throw new Error('never refused');
}

/** Two instances of one app factory on one database, with BUDGETS: one budget between them. */
export function useBudgetedPair(started: (cluster: Cluster, a: App, b: App) => void): void {
  let cluster: Cluster;
  let apps: App[] = [];
  beforeAll(async () => {
    cluster = await startCluster([]);
    apps = await Promise.all([cluster.startInstance(BUDGETS), cluster.startInstance(BUDGETS)]);
    started(cluster, apps[0]!, apps[1]!);
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    await cluster?.stop();
  });
}

/** Signals stored for `userId`. */
export async function signalsOf(db: pg.Client, userId: string): Promise<number> {
  return Number((await db.query('SELECT count(*) AS n FROM signal WHERE user_id = $1', [userId])).rows[0].n);
}

/** A 429 RATE_LIMITED by `limit`. */
export function expectRateLimited(response: { status: number; errors?: { extensions?: Record<string, unknown> }[] }, limit: string): void {
  expect(response.status).toBe(429);
  expect(response.errors![0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', limit });
}

/** A user refused before its request is read, its bucket empty: 429 RATE_LIMITED, Retry-After, no point left, nothing charged. */
export function expectEmptyBucketRefusal(response: Awaited<ReturnType<typeof post>>): void {
  expectRateLimited(response, 'budget');
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(response.headers.get('ratelimit')).toMatch(/^"user";r=0;t=\d+$/);
  expect(response.extensions!['cost']).toMatchObject({
    actualQueryCost: 0,
    throttleStatus: { maximumAvailable: 20, currentlyAvailable: 0 },
  });
}
