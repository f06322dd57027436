import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { instancesThatFit, sessionPlan, total, type SessionPlan } from '../src/app/session-plan.js';
import { PGBOUNCER_POOL_SIZE } from '../tooling/pgbouncer.js';
import { localAppConfig } from '../tooling/start-app.js';
import { capturedLog, freshDatabase, gql, eventually, routed, setRoleLimits, sqlClient, startApp, TEST_SECRET } from './support/harness.js';
import { receiver, type Receiver } from './support/webhook-receivers.js';

// The sessions an instance holds, read from pg_stat_activity, against what sessionPlan computes from
// the settings (the same function docs/scaling.md's formula and the start-up warning use).

const ENVIRONMENT = { WEBHOOK_DELIVERY: 'on', WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1' };
const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { status } }`;
const REGISTER = `mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventKinds: [LEFT]) { endpoint { id } } }`;

type Counts = Record<string, number>;

let databaseUrl: string;
let db: pg.Client;
let plan: SessionPlan;
let hook: Receiver;
const apps: App[] = [];

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  db = await sqlClient(databaseUrl);
  plan = sessionPlan(localAppConfig(databaseUrl, { secret: TEST_SECRET, environment: ENVIRONMENT }));
  hook = await receiver((_req, res) => void res.writeHead(200).end());
});

afterAll(async () => {
  await Promise.all(apps.map((app) => app.stop()));
  await db?.end();
  await hook?.close();
});

/** The client sessions on the test database (but this test's), by instance and kind (`sessionName`); unnamed ones under '?'. */
async function sessions(): Promise<Map<string, Counts>> {
  const { rows } = await db.query<{ name: string; n: number }>(
    `SELECT application_name AS name, count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1`,
  );
  const byInstance = new Map<string, Counts>();
  for (const { name, n } of rows) {
    const [, kind = `unnamed "${name}"`, id = '?'] = /^community-layer (.+) ([0-9a-f]{8})$/.exec(name) ?? [];
    const counts = byInstance.get(id) ?? {};
    counts[kind] = (counts[kind] ?? 0) + n;
    byInstance.set(id, counts);
  }
  return byInstance;
}

const pick = (counts: Counts, kinds: object) => Object.keys(kinds).reduce((sum, kind) => sum + (counts[kind] ?? 0), 0);

/** Every session of the instance is of a planned kind and within its planned number; direct and pooled within their sums. */
function expectWithinPlan(counts: Counts): void {
  const planned: Counts = { ...plan.direct, ...plan.pooled };
  for (const [kind, n] of Object.entries(counts)) expect({ kind, n: Math.min(n, planned[kind] ?? 0) }).toEqual({ kind, n });
  expect(pick(counts, plan.direct)).toBeLessThanOrEqual(total(plan.direct));
  expect(pick(counts, plan.pooled)).toBeLessThanOrEqual(total(plan.pooled));
}

/** Idle: its listener and the queue's two held sessions (graphile-worker's LISTEN, the liveness locks) are there. */
async function idleSessions(): Promise<Map<string, Counts>> {
  let seen = new Map<string, Counts>();
  await eventually(async () => {
    seen = await sessions();
    return apps.every((app) => seen.get(app.instanceId)?.listener === 1 && (seen.get(app.instanceId)?.['webhook-queue'] ?? 0) >= 2);
  });
  return seen;
}

/** The most sessions of each kind seen per instance while `load` ran. */
async function peakDuring(load: Promise<unknown>): Promise<Map<string, Counts>> {
  const peak = new Map<string, Counts>();
  let done = false;
  const finished = load.finally(() => {
    done = true;
  });
  while (!done) {
    for (const [id, counts] of await sessions()) {
      const most = peak.get(id) ?? {};
      for (const [kind, n] of Object.entries(counts)) most[kind] = Math.max(most[kind] ?? 0, n);
      peak.set(id, most);
    }
  }
  await finished;
  return peak;
}

/** Signals and leaves on every instance at once, and the leaves' webhook deliveries received. */
async function smallLoad(round: number): Promise<void> {
  const before = hook.requests;
  const users = apps.flatMap((app, a) => Array.from({ length: 4 }, (_, u) => ({ app, userId: String(round * 1000 + a * 100 + u + 1) })));
  await Promise.all(
    users.flatMap(({ app, userId }) =>
      Array.from({ length: 5 }, () => gql(app, SIGNAL, { input: { userId, itemId: 'sized', kind: 'VIEW', context: {} } })),
    ),
  );
  await Promise.all(users.map(({ app, userId }) => gql(app, `mutation { leaveCommunityLayer(userId: "${userId}") { status } }`)));
  await eventually(() => hook.requests >= before + users.length);
}

const report = (label: string, counts: Counts) =>
  console.info(`${label}: direct ${pick(counts, plan.direct)}, pooled ${pick(counts, plan.pooled)} ${JSON.stringify(counts)}`);

it('one instance, then two, hold no more sessions of each kind than sessionPlan computes, idle and under load', async () => {
  apps.push(await startApp(databaseUrl, ENVIRONMENT));
  expect((await gql(apps[0]!, REGISTER, { url: hook.url })).errors).toBeUndefined();
  for (const instances of [1, 2]) {
    if (instances === 2) apps.push(await startApp(databaseUrl, ENVIRONMENT));
    const idle = await idleSessions();
    const loaded = await peakDuring(smallLoad(instances));
    expect([...idle.keys(), ...loaded.keys()].filter((id) => !apps.some((app) => app.instanceId === id))).toEqual([]);
    for (const app of apps) {
      expectWithinPlan(idle.get(app.instanceId)!);
      expectWithinPlan(loaded.get(app.instanceId)!);
      report(`${instances} instance(s), idle, ${app.instanceId}`, idle.get(app.instanceId)!);
      report(`${instances} instance(s), under load, ${app.instanceId}`, loaded.get(app.instanceId)!);
    }
    // The load did use the pool: the figures are of an instance at work.
    expect(Math.max(...apps.map((app) => loaded.get(app.instanceId)!.requests ?? 0))).toBeGreaterThan(0);
  }
  // The formula's answer for max_connections = 100 stands on these counts: no instance exceeded its plan.
  const fit = instancesThatFit(plan, {
    slots: { maxConnections: 100, superuserReservedConnections: 3, reservedConnections: 0, otherSessions: 0 },
  });
  console.info(`plan: direct ${total(plan.direct)}, pooled ${total(plan.pooled)}; fit in max_connections = 100: ${fit}`);
  expect(fit * (total(plan.direct) + total(plan.pooled))).toBeLessThanOrEqual(97);
}, 180_000);

it('behind PgBouncer an instance holds its direct sessions only, and the server the pooler’s pool besides', async () => {
  const directUrl = await freshDatabase();
  await setRoleLimits(directUrl);
  const target = routed(directUrl, 'pgbouncer');
  const app = await startApp(target.url, { ...target.environment, ...ENVIRONMENT });
  const client = await sqlClient(directUrl);
  try {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => gql(app, SIGNAL, { input: { userId: String(i + 1), itemId: 'x', kind: 'VIEW', context: {} } })),
    );
    const { rows } = await client.query<{ name: string; n: number }>(
      `SELECT application_name AS name, count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1`,
    );
    const direct = rows.filter((row) => /^community-layer (listener|webhook-queue) /.test(row.name)).reduce((sum, row) => sum + row.n, 0);
    const all = rows.reduce((sum, row) => sum + row.n, 0);
    console.info(`behind PgBouncer: direct ${direct}, all server sessions on the database ${all} ${JSON.stringify(rows)}`);
    expect(direct).toBeGreaterThanOrEqual(3);
    expect(direct).toBeLessThanOrEqual(total(plan.direct));
    expect(all).toBeLessThanOrEqual(total(plan.direct) + PGBOUNCER_POOL_SIZE);
  } finally {
    await client.end();
    await app.stop();
  }
}, 120_000);

it('warns at start, with the numbers, when its peak exceeds the free connection slots, and starts all the same', async () => {
  const { rows } = await db.query<{ max: number }>(`SELECT current_setting('max_connections')::int AS max`);
  const poolMax = 200;
  expect(poolMax + total(plan.direct)).toBeGreaterThan(rows[0]!.max);
  const { logger, entries } = capturedLog();
  const app = await startApp(databaseUrl, { ...ENVIRONMENT, DB_POOL_MAX: String(poolMax) }, { logger });
  try {
    const warnings = entries.filter((entry) => entry.level === 40 && /database sessions/.test(entry.msg));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ maxConnections: rows[0]!.max, peak: poolMax + 2 + total(plan.direct) });
    expect(warnings[0]!.msg).toMatch(
      new RegExp(`may hold ${poolMax + 2 + total(plan.direct)} database sessions, but the server has -?\\d+ free`),
    );
  } finally {
    await app.stop();
  }
}, 60_000);
