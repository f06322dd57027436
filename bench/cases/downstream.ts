import { fork } from 'node:child_process';
import type pg from 'pg';
import { eventually } from '../../tooling/eventually.js';
import type { Case, Row } from '../case.js';
import { graphql } from '../cluster.js';
import { ms, num } from '../format.js';
import { summarize } from '../stats.js';

const LEAVE_LABEL = '16. leave latency, 10 webhooks vs none';
const SPLIT_LABEL = '19. leave latency, 10 webhooks vs none, delivery on its own instance';
const FEED_LABEL = '17. change feed replay';
const ENDPOINTS = 10;
const PAGE = 1000;
const DRAIN_MS = 300_000;
// The receiver is on loopback: allowed, as an operator allows an internal receiver. The feed reader
// pages 1,000 events a request: a named service with a budget for it, as an operator would give a warehouse.
const ALLOW = { WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1', FAIR_SHARE_SERVICES: 'warehouse=1000000/1000000' };

/** One deployment measured: where leaves are sent, the database, and the figures of each arm. */
interface Deployment {
  label: string;
  app: { url: string };
  db: pg.Client;
  latencies: { none: number[]; webhooks: number[] };
  deliverySeconds: number;
}

/**
 * Leaves (each then rejoined, untimed) against server processes of their own, with 10 registered
 * endpoints receiving every event against none, in alternating rounds of one run, in two
 * deployments on databases of their own: the default, where the instance serving the leaves also
 * delivers (16), and WEBHOOK_DELIVERY=off on it with delivery on another instance (18). The
 * receiver is a process of its own, so neither the servers' work nor the receiver's shares the
 * event loop that times the leaves. Endpoints are switched by SQL only between rounds, once every
 * delivery is made and every event dispatched, so no delivery is skipped and no round inherits
 * another's backlog; each webhooks round is timed until its deliveries are all made (deliveries
 * per second, which must all be made). Then the feed replayed from cursor 0 through the paged
 * query, over `feedEvents` outbox rows made with generate_series.
 */
export const downstream: Case = {
  labels: [LEAVE_LABEL, FEED_LABEL, SPLIT_LABEL],
  async run(cluster, sizes) {
    const receiver = fork(new URL('../webhook-receiver.ts', import.meta.url));
    try {
      const port = await new Promise<number>((resolve) =>
        receiver.once('message', (message) => resolve((message as { port: number }).port)),
      );
      const deploy = async (label: string, serving: Record<string, string>, deliveryInstance: boolean): Promise<Deployment> => {
        const url = await cluster.freshDatabase();
        const app = { url: (await cluster.startProcesses(url, 1, { ...ALLOW, ...serving })).urls[0]! };
        if (deliveryInstance) await cluster.startProcesses(url, 1, ALLOW);
        for (let i = 0; i < ENDPOINTS; i++) {
          await graphql(
            app,
            cluster.token,
            `mutation ($u: String!) { registerWebhookEndpoint(url: $u, eventKinds: [LEFT, REJOINED]) { secret } }`,
            { u: `http://127.0.0.1:${port}/hook` },
          );
        }
        return { label, app, db: await cluster.sqlClient(url), latencies: { none: [], webhooks: [] }, deliverySeconds: 0 };
      };
      const deployments = [await deploy(LEAVE_LABEL, {}, false), await deploy(SPLIT_LABEL, { WEBHOOK_DELIVERY: 'off' }, true)];
      let user = 9_000_000;
      for (let round = 0; round < sizes.rounds; round++) {
        for (const deployment of deployments) {
          for (const arm of ['none', 'webhooks'] as const) {
            const { app, db } = deployment;
            await settled(db);
            await db.query(
              arm === 'none'
                ? `UPDATE webhook_endpoint SET disabled_at = now(), disabled_reason = 'bench'`
                : `UPDATE webhook_endpoint SET disabled_at = NULL, disabled_reason = NULL`,
            );
            const started = performance.now();
            for (let i = 0; i < sizes.changes; i++) {
              const u = String(user++);
              const leaveStarted = performance.now();
              await graphql(app, cluster.token, `mutation ($u: UInt64) { leaveCommunityLayer(userId: $u) { leftAtNs } }`, { u });
              deployment.latencies[arm].push(performance.now() - leaveStarted);
              await graphql(app, cluster.token, `mutation ($u: UInt64) { rejoinCommunityLayer(userId: $u) { status } }`, { u });
            }
            if (arm === 'webhooks') {
              await settled(db);
              deployment.deliverySeconds += (performance.now() - started) / 1000;
            }
          }
        }
      }
      const expected = sizes.rounds * sizes.changes * 2 * ENDPOINTS;
      const rows: Row[] = [];
      for (const deployment of deployments) rows.push(await leaveRow(deployment, expected));
      // The replayed rows are feed events too: not for the endpoints.
      const { app, db } = deployments[0]!;
      await db.query(`UPDATE webhook_endpoint SET disabled_at = now(), disabled_reason = 'bench'`);
      // The feed is for services: a token without a user id.
      const feed = await replayFeed(app, await cluster.tokenFor('warehouse', 'community:feed'), db, sizes.feedEvents);
      const feedRow: Row = {
        case: FEED_LABEL,
        figure: `${num(feed.read / feed.seconds)} events/s (${num(feed.read)} of ${num(feed.total)} in ${feed.seconds.toFixed(1)} s, pages of ${PAGE})`,
        ceiling: '',
        ratio: null,
        target: '—',
        met: feed.read === feed.total ? null : false,
        details: feed,
      };
      return [rows[0]!, feedRow, rows[1]!];
    } finally {
      receiver.disconnect();
    }
  },
};

/** Its deliveries must all have been made: a fix that stops delivering does not meet the target. */
async function leaveRow({ label, db, latencies, deliverySeconds }: Deployment, expected: number): Promise<Row> {
  const statuses = Object.fromEntries(
    (await db.query(`SELECT status, count(*)::int AS n FROM webhook_delivery GROUP BY status`)).rows.map((r) => [r.status, r.n]),
  );
  const delivered: number = statuses.DELIVERED ?? 0;
  const none = summarize(latencies.none);
  const webhooks = summarize(latencies.webhooks);
  const ratio = webhooks.p50 / none.p50;
  const perSecond = delivered / deliverySeconds;
  // Delivering beside the leaves costs the serving instance's CPU; on an instance of its own, next to nothing.
  const limit = label === LEAVE_LABEL ? 1.3 : 1.1;
  return {
    case: label,
    figure:
      `p50 ${ms(webhooks.p50)} with 10 endpoints vs ${ms(none.p50)} without (p99 ${ms(webhooks.p99)} vs ${ms(none.p99)}); ` +
      `${num(perSecond)} deliveries/s, ${num(delivered)} of ${num(expected)} delivered`,
    ceiling: '',
    ratio,
    target: `≤ ${limit}×, all delivered`,
    met: ratio <= limit && delivered === expected,
    details: { none, webhooks, expected, statuses, deliverySeconds, deliveriesPerSecond: perSecond },
  };
}

/** Untimed: every event dispatched and no delivery pending (the round's deliveries all made). */
function settled(db: pg.Client): Promise<void> {
  return eventually(async () => {
    const { rows } = await db.query(`
      SELECT (SELECT position FROM webhook_dispatch) = (SELECT coalesce(max(position), 0) FROM membership_event)
        AND NOT EXISTS (SELECT 1 FROM webhook_delivery WHERE status = 'PENDING') AS settled`);
    return rows[0].settled === true;
  }, DRAIN_MS);
}

async function replayFeed(app: { url: string }, token: string, db: pg.Client, events: number) {
  await db.query(
    `WITH clock AS (UPDATE membership_clock SET version = version + $1 RETURNING version - $1 AS base)
     INSERT INTO membership_event (position, kind, user_id, left_at_ns)
     SELECT clock.base + g, 'LEFT', (g % 100000)::text::u64, g FROM clock, generate_series(1, $1::int) g`,
    [events],
  );
  const total = Number((await db.query(`SELECT count(*) AS n FROM membership_event`)).rows[0].n);
  const started = performance.now();
  let after: string | null = null;
  let read = 0;
  for (;;) {
    const page: { changes: { id: string }[]; endCursor: string | null; hasMore: boolean } = (
      await graphql(
        app,
        token,
        `query ($a: String, $n: Int) { communityMembershipChangePage(after: $a, first: $n) { changes { id kind userId leftAtNs } endCursor hasMore } }`,
        { a: after, n: PAGE },
      )
    ).communityMembershipChangePage;
    read += page.changes.length;
    if (!page.hasMore) break;
    after = page.endCursor;
  }
  return { read, total, seconds: (performance.now() - started) / 1000 };
}
