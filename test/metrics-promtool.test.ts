import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { App } from '../src/app.js';
import { promtool } from '../tooling/promtool.js';
import { eventually, freshDatabase, gql, metric, startApp, token } from './support/harness.js';
import { scrapedFamilies } from './support/scrape.js';
import { subscribe } from './support/sse.js';

/**
 * A server that served every kind of operation (queries, mutations, a subscription and a change
 * feed, refusals at parse, validation and input), delivered a webhook to a receiver on loopback
 * and finished a purge: its scrape passes `promtool check metrics` with nothing to say.
 */
describe('metrics of a busy server', () => {
  let app: App;
  let receiver: http.Server;
  let received = 0;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      req.resume().on('end', () => {
        received++;
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    app = await startApp(await freshDatabase(), {
      WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1',
      WEBHOOK_POLL_MS: '50',
      PURGE_POLL_MS: '50',
      FEED_POLL_MS: '50',
    });
  });

  afterAll(async () => {
    await app?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('pass promtool check metrics, with every kind of operation, delivery and purge counted', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const registered = await gql(
      app,
      `mutation { registerWebhookEndpoint(url: "${url}", eventKinds: [LEFT, REJOINED]) { endpoint { id } } }`,
    );
    expect(registered.errors).toBeUndefined();
    const feed = await subscribe(
      app,
      `subscription { communityMembershipChanges { cursor } }`,
      {},
      await token('feed-reader', 'community:feed'),
    );
    const watch = await subscribe(app, `subscription { communityLayerStatusChanged(userId: "71") { status } }`, {}, await token('71'));
    expect((await watch.next())?.data?.data?.communityLayerStatusChanged?.status).toBe('ACTIVE');

    await gql(app, `mutation { signal(input: { userId: "71", itemId: "i", kind: VIEW }) { forwarded } }`);
    await gql(app, `mutation { leaveCommunityLayer(userId: "71") { status } }`);
    await gql(app, `query ExampleStatus { communityLayerStatus(userId: "71") { status } }`);
    await gql(app, `mutation { signal(input: { userId: "71", itemId: "", kind: VIEW }) { forwarded } }`); // BAD_USER_INPUT
    await gql(app, `{ communityLayerStatus(userId: "71") {`); // parse
    await gql(app, `{ noSuchField }`); // validation
    await gql(app, `{ communityLayerStatus(userId: "71") { status } }`, {}, 'not.a.token'); // UNAUTHENTICATED
    const purge = await gql(app, `mutation { purgeCommunityContributions(userId: "71") { purgeId } }`);
    expect(purge.errors).toBeUndefined();
    await eventually(async () => (await metric(app, 'community_purges_finished_total')) === 1, 60_000);
    await gql(app, `mutation { rejoinCommunityLayer(userId: "71") { status } }`);
    await eventually(async () => (await metric(app, 'community_webhook_deliveries_total', { outcome: 'delivered' })) >= 2, 60_000);
    expect((await feed.next())?.data?.data?.communityMembershipChanges?.cursor).toEqual(expect.any(String));
    await eventually(async () => (await metric(app, 'community_change_feed_lag_seconds_count')) >= 2, 60_000);
    // The deployment's gauges are read from the tables at most once a second, so a scrape may show the
    // reading taken while the purge still ran: wait for one that saw it finished and every delivery made.
    await eventually(
      async () => (await metric(app, 'community_webhook_backlog')) === 0 && (await metric(app, 'community_purges_running')) === 0,
      60_000,
    );
    await feed.close();
    await watch.close();
    expect(received).toBeGreaterThanOrEqual(2);

    const { text } = await scrapedFamilies(app);
    for (const sample of [
      'graphql_operations_total{operation="ExampleStatus",type="query",outcome="ok",code="none"} 1',
      'graphql_operations_total{operation="other",type="mutation",outcome="rejected",code="BAD_USER_INPUT"} 1',
      'graphql_operations_total{operation="other",type="unknown",outcome="rejected",code="GRAPHQL_PARSE_FAILED"} 1',
      'graphql_operations_total{operation="other",type="unknown",outcome="rejected",code="GRAPHQL_VALIDATION_FAILED"} 1',
      'graphql_operations_total{operation="other",type="subscription",outcome="ok",code="none"} 2',
      'community_http_responses_total{status_class="5xx"} 0',
      'community_purges_running 0',
      'community_webhook_backlog 0',
    ]) {
      expect(text).toContain(`${sample}\n`);
    }
    expect(await metric(app, 'community_http_responses_total', { status_class: '2xx' })).toBeGreaterThanOrEqual(10);
    expect(await metric(app, 'community_purge_signals_removed_total')).toBe(1);
    expect(await metric(app, 'community_purge_duration_seconds_count')).toBe(1);

    const checked = await promtool(['check', 'metrics'], text);
    expect({ code: checked.code, problems: checked.stdout + checked.stderr }).toEqual({ code: 0, problems: '' });
  });
});

describe('the dashboard and the alerts (deploy/)', () => {
  const rules = parse(readFileSync('deploy/prometheus/alerts.yaml', 'utf8')) as {
    groups: { rules: { alert?: string; expr: string; annotations?: { runbook?: string } }[] }[];
  };
  const alerts = rules.groups.flatMap((group) => group.rules).filter((rule) => rule.alert);
  const dashboard = JSON.parse(readFileSync('deploy/grafana/community-layer.json', 'utf8')) as {
    panels: { targets?: { expr: string }[] }[];
  };
  const operations = readFileSync('docs/operations.md', 'utf8');
  const runbooks = operations.slice(operations.indexOf('## Alerts and runbooks'), operations.indexOf('## Shutdown'));

  it('pass promtool check rules, and promtool test rules fires each alert on its synthetic series', async () => {
    const checked = await promtool(['check', 'rules', 'deploy/prometheus/alerts.yaml']);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    const tested = await promtool(['test', 'rules', 'deploy/prometheus/alerts.test.yaml']);
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    // Each alert has a test that expects it to fire.
    const tests = readFileSync('deploy/prometheus/alerts.test.yaml', 'utf8');
    for (const { alert } of alerts) expect(tests).toMatch(new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels`));
  });

  it('each alert names its runbook section of docs/operations.md', () => {
    expect(alerts.length).toBeGreaterThanOrEqual(10);
    for (const { alert, annotations } of alerts) {
      expect(annotations?.runbook).toBe(`docs/operations.md#${alert!.toLowerCase()}`);
      expect(runbooks).toContain(`\n### ${alert}\n`);
    }
  });

  it('use only metrics a running server exports', async () => {
    const app = await startApp(await freshDatabase());
    try {
      const { families } = await scrapedFamilies(app);
      const expressions = [
        ...rules.groups.flatMap((group) => group.rules.map((rule) => rule.expr)),
        ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
        runbooks,
      ];
      const named = new Set(
        expressions.flatMap((text) => [...text.matchAll(/\b(?:community|graphql|nodejs|process)_[a-z0-9_]+\b/g)].map((match) => match[0])),
      );
      expect(named.size).toBeGreaterThanOrEqual(30);
      const missing = [...named].filter((name) => !families.has(name) && !families.has(name.replace(/_(bucket|count|sum)$/, '')));
      expect(missing).toEqual([]);
    } finally {
      await app.stop();
    }
  });
});
