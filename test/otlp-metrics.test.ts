import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import type { ReceivedMetric, ReceivedMetrics } from '../tooling/otlp-json.js';
import { startOtlpReceiver, type OtlpReceiver } from '../tooling/otlp-receiver.js';
import { capturedLog, freshDatabase, gql, startApp } from './support/harness.js';
import { scrapedFamilies } from './support/scrape.js';

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const QUERIES = 3;

let receiver: OtlpReceiver;
let databaseUrl: string;
let app: App;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  databaseUrl = await freshDatabase();
  // The metrics URL alone, used as it is: tracing stays off.
  app = await startApp(databaseUrl, {
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics`,
    OTEL_METRIC_EXPORT_INTERVAL: '200',
    OTEL_SERVICE_NAME: 'community-layer-otlp',
  });
});

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
});

const fromInstance = (instance: App) => (received: ReceivedMetrics) => received.resource['service.instance.id'] === instance.instanceId;
const named = (received: ReceivedMetrics, name: string): ReceivedMetric | undefined =>
  received.metrics.find((metric) => metric.name === name);
const okQueries = (received: ReceivedMetrics) =>
  (named(received, 'graphql_operations_total')?.points ?? [])
    .filter(({ attributes }) => attributes['type'] === 'query' && attributes['outcome'] === 'ok')
    .reduce((sum, { value }) => sum + value, 0);

async function serveQueries(instance: App, count: number): Promise<void> {
  for (let i = 0; i < count; i++)
    expect((await gql(instance, `query { communityLayerStatus(userId: "${70 + i}") { status } }`)).errors).toBeUndefined();
}

describe('metrics over OTLP/HTTP (to a real receiver)', () => {
  it('exports what /metrics shows: same names, help, labels and values, counters as cumulative sums, histograms with their buckets', async () => {
    await serveQueries(app, QUERIES);
    const scraped = await scrapedFamilies(app);
    // An export may be under way, collected while the queries ran; the one after it was collected after the scrape.
    const inFlight = receiver.metricExports.length;
    const received = await receiver.waitForMetrics((candidate) => receiver.metricExports.indexOf(candidate) > inFlight);
    expect(okQueries(received)).toBeGreaterThanOrEqual(QUERIES);

    expect(received.resource).toMatchObject({
      'service.name': 'community-layer-otlp',
      'service.instance.id': app.instanceId,
      'service.version': VERSION,
    });
    // Every family the scrape shows with a sample is exported, and nothing the scrape does not name.
    // nodejs_active_requests has a sample only while libuv has a request in flight (a file read, a
    // DNS lookup): one collection may show it and the next not, so it is left out of the comparison.
    const sampled = [...scraped.families]
      .filter((family) => family !== 'nodejs_active_requests')
      .filter((family) => new RegExp(`^${family}(_bucket|_sum|_count)?[{ ]`, 'm').test(scraped.text));
    const exported = received.metrics.map(({ name }) => name);
    expect(exported).toEqual(expect.arrayContaining(sampled));
    expect(scraped.families).toEqual(new Set([...scraped.families, ...exported]));

    const build = named(received, 'community_layer_build_info');
    expect(build).toMatchObject({ kind: 'gauge', points: [{ attributes: { version: VERSION, commit: expect.any(String) }, value: 1 }] });
    expect(build?.description).toMatch(/^Always 1/);

    const operations = named(received, 'graphql_operations_total');
    expect(operations).toMatchObject({ kind: 'sum', monotonic: true, temporality: 2 });
    expect(operations?.points[0]?.attributes).toEqual({
      operation: expect.any(String),
      type: expect.any(String),
      outcome: expect.any(String),
      code: expect.any(String),
    });

    const duration = named(received, 'graphql_operation_duration_seconds');
    expect(duration).toMatchObject({ kind: 'histogram', temporality: 2 });
    const queries = duration!.points.filter(({ attributes }) => attributes['type'] === 'query' && attributes['outcome'] === 'ok');
    expect(queries.reduce((sum, point) => sum + point.value, 0)).toBeGreaterThanOrEqual(QUERIES);
    for (const { histogram } of duration!.points) {
      expect(histogram!.bounds).toEqual([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]);
      expect(histogram!.bucketCounts).toHaveLength(histogram!.bounds.length + 1);
      expect(histogram!.bucketCounts.every((count) => count >= 0)).toBe(true);
      expect(histogram!.bucketCounts.reduce((sum, count) => sum + count, 0)).toBe(histogram!.count);
      expect(histogram!.sum).toBeGreaterThan(0);
    }
  });

  it('exports once more when the app stops, however long its interval', async () => {
    const hourly = await startApp(databaseUrl, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRIC_EXPORT_INTERVAL: '3600000' });
    await serveQueries(hourly, 2);
    expect(receiver.metricExports.some(fromInstance(hourly))).toBe(false);
    await hourly.stop();
    const final = receiver.metricExports.filter(fromInstance(hourly));
    expect(final).toHaveLength(1);
    expect(okQueries(final[0]!)).toBeGreaterThanOrEqual(2);
  });

  it('stops, with a warning, when the collector never answers', async () => {
    const silent = http.createServer(() => {}); // takes each request and never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const log = capturedLog();
    const stuck = await startApp(
      databaseUrl,
      { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, OTEL_METRIC_EXPORT_INTERVAL: '3600000' },
      { logger: log.logger },
    );
    try {
      await stuck.stop();
      expect(log.entries.some((entry) => entry.msg === 'the final metrics export did not finish')).toBe(true);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
