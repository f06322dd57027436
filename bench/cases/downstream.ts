import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Case } from '../case.js';
import { graphql } from '../cluster.js';
import { ms, num } from '../format.js';
import { summarize } from '../stats.js';

const LEAVE_LABEL = '16. leave latency, 10 webhooks vs none';
const FEED_LABEL = '17. change feed replay';
const ENDPOINTS = 10;
const PAGE = 1000;

/**
 * Leaves (each then rejoined, untimed) with 10 registered endpoints receiving every event against
 * none, in alternating rounds of one run (the endpoints are disabled by SQL for the "none" rounds):
 * delivery must not reach the leave's path. Then the feed replayed from cursor 0 through the paged
 * query, over `feedEvents` outbox rows made with generate_series.
 */
export const downstream: Case = {
  labels: [LEAVE_LABEL, FEED_LABEL],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const app = await cluster.startApp(url);
    const db = await cluster.sqlClient(url);
    const receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    for (let i = 0; i < ENDPOINTS; i++) {
      await graphql(app, cluster.token, `mutation ($u: String!) { registerWebhookEndpoint(url: $u, eventKinds: [LEFT, REJOINED]) { secret } }`, { u: hook });
    }
    const latencies = { none: [] as number[], webhooks: [] as number[] };
    let user = 9_000_000;
    for (let round = 0; round < sizes.rounds * 2; round++) {
      const arm = round % 2 === 0 ? 'none' : 'webhooks';
      await db.query(arm === 'none' ? `UPDATE webhook_endpoint SET disabled_at = now(), disabled_reason = 'bench'` : `UPDATE webhook_endpoint SET disabled_at = NULL, disabled_reason = NULL`);
      for (let i = 0; i < sizes.changes; i++) {
        const u = String(user++);
        const started = performance.now();
        await graphql(app, cluster.token, `mutation ($u: UInt64) { leaveCommunityLayer(userId: $u) { leftAtNs } }`, { u });
        latencies[arm].push(performance.now() - started);
        await graphql(app, cluster.token, `mutation ($u: UInt64) { rejoinCommunityLayer(userId: $u) { status } }`, { u });
      }
    }
    const delivered = Number((await db.query(`SELECT count(*) AS n FROM webhook_delivery WHERE status = 'DELIVERED'`)).rows[0].n);
    receiver.close();
    const none = summarize(latencies.none);
    const webhooks = summarize(latencies.webhooks);
    const leaveRatio = webhooks.p50 / none.p50;

    await db.query(
      `WITH clock AS (UPDATE membership_clock SET version = version + $1 RETURNING version - $1 AS base)
       INSERT INTO membership_event (position, kind, user_id, left_at_ns)
       SELECT clock.base + g, 'LEFT', (g % 100000)::text::u64, g FROM clock, generate_series(1, $1::int) g`,
      [sizes.feedEvents],
    );
    const total = Number((await db.query(`SELECT count(*) AS n FROM membership_event`)).rows[0].n);
    const started = performance.now();
    let after: string | null = null;
    let read = 0;
    for (;;) {
      const page: { changes: { id: string }[]; endCursor: string | null; hasMore: boolean } = (
        await graphql(app, cluster.token, `query ($a: String, $n: Int) { communityMembershipChangePage(after: $a, first: $n) { changes { id kind userId leftAtNs } endCursor hasMore } }`, { a: after, n: PAGE })
      ).communityMembershipChangePage;
      read += page.changes.length;
      if (!page.hasMore) break;
      after = page.endCursor;
    }
    const seconds = (performance.now() - started) / 1000;
    await db.end();
    return [
      {
        case: LEAVE_LABEL,
        figure: `p50 ${ms(webhooks.p50)} with 10 endpoints vs ${ms(none.p50)} without (p99 ${ms(webhooks.p99)} vs ${ms(none.p99)})`,
        ceiling: '',
        ratio: leaveRatio,
        target: '≤ 1.1×',
        met: leaveRatio <= 1.1,
        details: { none, webhooks, deliveredDuringRun: delivered },
      },
      {
        case: FEED_LABEL,
        figure: `${num(read / seconds)} events/s (${num(read)} of ${num(total)} in ${seconds.toFixed(1)} s, pages of ${PAGE})`,
        ceiling: '',
        ratio: null,
        target: '—',
        met: read === total ? null : false,
        details: { read, total, seconds },
      },
    ];
  },
};
