import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { freshDatabase, gql, sqlClient, startApp, startServer, token } from './support/harness.js';

const SIGNAL = `mutation Send($input: SignalInput!) { signal(input: $input) { signalId forwarded } }`;

async function scrape(app: App): Promise<Map<string, number>> {
  const text = await (await fetch(app.metricsUrl)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) samples.set(match[1]!, Number(match[2]));
  }
  return samples;
}

describe('metrics', () => {
  let app: App;
  let other: App;

  beforeAll(async () => {
    const databaseUrl = await freshDatabase();
    [app, other] = await Promise.all([startApp(databaseUrl), startApp(databaseUrl)]);
  });

  afterAll(() => Promise.all([app?.stop(), other?.stop()]));

  it('are served on their own loopback listener, not on the API port', async () => {
    const api = await fetch(new URL('/metrics', app.url));
    expect(api.status).toBe(404);
    expect(await api.text()).not.toMatch(/community_/);
    const metricsUrl = new URL(app.metricsUrl);
    expect(metricsUrl.hostname).toBe('127.0.0.1');
    expect(metricsUrl.port).not.toBe(new URL(app.url).port);
    const scraped = await fetch(metricsUrl);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/^community_cache_in_sync 1$/m);
    expect((await fetch(new URL('/graphql', metricsUrl))).status).toBe(404);
  });

  it('move as expected after each kind of operation', async () => {
    const before = await scrape(app);
    const delta = async (name: string) => ((await scrape(app)).get(name) ?? 0) - (before.get(name) ?? 0);

    await gql(app, SIGNAL, { input: { userId: '61', itemId: 'm', kind: 'VIEW' } });
    await gql(app, `mutation { leaveCommunityLayer(userId: "61") { status } }`);
    await gql(app, `mutation { leaveCommunityLayer(userId: "61") { status } }`);
    await gql(app, SIGNAL, { input: { userId: '61', itemId: 'm', kind: 'VIEW' } });
    await gql(app, SIGNAL, { input: { userId: '61', itemId: '', kind: 'VIEW' } });
    await gql(other, `mutation { leaveCommunityLayer(userId: "62") { status } }`);
    await gql(app, `mutation { rejoinCommunityLayer(userId: "61") { status } }`);
    // Named by a trusted document: its own label; any other name (Send) is "other".
    await gql(app, `query ExampleStatus { communityLayerStatus(userId: "61") { status } }`);

    expect(await delta('community_signals_total{outcome="forwarded"}')).toBe(1);
    expect(await delta('community_signals_total{outcome="gated"}')).toBe(1);
    expect(await delta('community_signals_total{outcome="rejected"}')).toBe(1);
    expect(await delta('community_membership_changes_total{action="leave",result="changed"}')).toBe(1);
    expect(await delta('community_membership_changes_total{action="leave",result="unchanged"}')).toBe(1);
    expect(await delta('community_membership_changes_total{action="rejoin",result="changed"}')).toBe(1);
    expect(await delta('graphql_operation_duration_seconds_count{operation="other",type="mutation",outcome="rejected"}')).toBe(1);
    expect(await delta('graphql_operation_duration_seconds_count{operation="ExampleStatus",type="query",outcome="ok"}')).toBe(1);
    expect(await delta('graphql_operations_total{operation="ExampleStatus",type="query",outcome="ok",code="none"}')).toBe(1);
    expect([...(await scrape(app)).keys()].some((sample) => sample.includes('operation="Send"'))).toBe(false);
    expect(await delta('community_notification_lag_seconds_count')).toBeGreaterThanOrEqual(3);
    const now = await scrape(app);
    expect(now.get('community_cache_entries')).toBe(1);
    expect(now.get('community_cache_in_sync')).toBe(1);
    expect(now.get('community_listener_state{state="listening"}')).toBe(1);
    expect(now.get('community_db_pool_connections{state="waiting"}')).toBe(0);
    expect(now.has('process_cpu_seconds_total')).toBe(true);
  });
});

describe('graceful shutdown', () => {
  it('SIGTERM during a stream of signals: every acknowledged signal is stored, and the process exits 0', async () => {
    const databaseUrl = await freshDatabase();
    const server = await startServer(databaseUrl);
    const url = server.url;
    const bearer = await token('1', 'signals:write');
    const acknowledged: string[] = [];
    let refused = 0;
    const stream = async (client: number) => {
      for (let i = 0; ; i++) {
        try {
          const response = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
            body: JSON.stringify({ query: SIGNAL, variables: { input: { userId: String(client), itemId: `s-${i}`, kind: 'VIEW' } } }),
          });
          const body = (await response.json()) as { data?: { signal?: { signalId: string } } };
          if (response.ok && body.data?.signal) acknowledged.push(body.data.signal.signalId);
        } catch {
          refused++;
          return;
        }
      }
    };
    const clients = Array.from({ length: 16 }, (_, client) => stream(client));
    while (acknowledged.length < 200) await new Promise((resolve) => setTimeout(resolve, 10));
    const code = await server.stop('SIGTERM');
    await Promise.all(clients);
    expect(code).toBe(0);
    expect(refused).toBe(16);

    const db = await sqlClient(databaseUrl);
    try {
      const { rows } = await db.query('SELECT id::text FROM signal WHERE id = ANY($1::bigint[])', [acknowledged]);
      expect(rows.length).toBe(acknowledged.length);
    } finally {
      await db.end();
    }
  });
});
