import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { capturedLog, eventually, freshDatabase, startApp, token } from './support/harness.js';
import type { ReceivedSpan } from '../tooling/otlp-json.js';
import { startOtlpReceiver, type OtlpReceiver } from '../tooling/otlp-receiver.js';

const SEND = `mutation Send($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId status } }`;
const ITEM = 'traced-item-7f3a';

let receiver: OtlpReceiver;
let traced: App;
let untraced: App;
const tracedLog = capturedLog();
const untracedLog = capturedLog();

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const databaseUrl = await freshDatabase();
  traced = await startApp(
    databaseUrl,
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'community-layer-test', OTEL_BSP_SCHEDULE_DELAY: '50' },
    { logger: tracedLog.logger },
  );
  untraced = await startApp(databaseUrl, {}, { logger: untracedLog.logger });
});

afterAll(async () => {
  await traced?.stop();
  await untraced?.stop();
  await receiver?.close();
});

/** One `signals` call of two signals, as a traced sender makes it: its own trace and span in `traceparent`. */
async function sendTraced(app: App): Promise<{ traceId: string; parentSpanId: string; requestId: string; body: string; status: number }> {
  const [traceId, parentSpanId, requestId] = [
    randomBytes(16).toString('hex'),
    randomBytes(8).toString('hex'),
    `req-${randomBytes(4).toString('hex')}`,
  ];
  const inputs = ['1', '2'].map((userId) => ({ userId, itemId: ITEM, kind: 'VIEW' }));
  const body = JSON.stringify({ query: SEND, variables: { inputs }, operationName: 'Send' });
  const response = await fetch(app.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${await token('1', 'community:admin signals:write')}`,
      traceparent: `00-${traceId}-${parentSpanId}-01`,
      'x-request-id': requestId,
    },
    body,
  });
  const result = (await response.json()) as { errors?: unknown };
  expect(result.errors).toBeUndefined();
  return { traceId, parentSpanId, requestId, body, status: response.status };
}

describe('tracing (OTLP/HTTP to a real receiver)', () => {
  it('follows one signals call from the caller’s traceparent through the operation and its group commit into PostgreSQL', async () => {
    const sent = await sendTraced(traced);
    const http = await receiver.waitFor((span) => span.traceId === sent.traceId && span.parentSpanId === sent.parentSpanId);
    expect(http).toMatchObject({
      name: 'POST /graphql',
      kind: 2,
      attributes: { 'http.request.method': 'POST', 'http.response.status_code': 200 },
    });
    expect(http.resource['service.name']).toBe('community-layer-test');

    const operation = await receiver.waitFor((span) => span.parentSpanId === http.spanId);
    expect(operation).toMatchObject({
      name: 'mutation Send',
      traceId: sent.traceId,
      attributes: { 'graphql.operation.name': 'Send', 'graphql.operation.type': 'mutation' },
    });

    // The group commit is a trace of its own, linked to the request it carried.
    const group = await receiver.waitFor(
      (span) => span.name === 'signals group commit' && span.links.some((link) => link.spanId === operation.spanId),
    );
    expect(group.links).toContainEqual({ traceId: sent.traceId, spanId: operation.spanId });
    expect(group.parentSpanId).toBe('');
    expect(group.attributes['signals.count']).toBeGreaterThanOrEqual(2);

    const statement = await receiver.waitFor((span) => span.parentSpanId === group.spanId);
    expect(statement).toMatchObject({ name: 'SELECT', kind: 3, traceId: group.traceId, attributes: { 'db.system.name': 'postgresql' } });
    expect(statement.attributes['db.query.text']).toContain('ingest_signals(');

    // Variables are never in a span: no attribute anywhere holds the item id that was sent.
    const ofTheCall = (span: ReceivedSpan) => [sent.traceId, group.traceId].includes(span.traceId);
    expect(JSON.stringify(receiver.spans.filter(ofTheCall))).not.toContain(ITEM);
  });

  it('writes one access-log line per request: request id, trace id, operation, status, duration, bytes and signals', async () => {
    const sent = await sendTraced(traced);
    const line = await waitForLine(tracedLog.entries, sent.requestId);
    expect(line).toMatchObject({
      log: 'access',
      msg: 'request',
      traceId: sent.traceId,
      method: 'POST',
      path: '/graphql',
      status: 200,
      operation: 'Send',
      operationType: 'mutation',
      signals: 2,
      bytesIn: Buffer.byteLength(sent.body),
    });
    expect(line.durationMs).toBeGreaterThan(0);
    expect(line.bytesOut).toBeGreaterThan(100);
    expect(tracedLog.entries.filter((entry) => entry.requestId === sent.requestId && entry.msg === 'request')).toHaveLength(1);
  });

  it('without an OTLP endpoint starts no SDK, yet logs the caller’s trace id', async () => {
    const sent = await sendTraced(untraced);
    const line = await waitForLine(untracedLog.entries, sent.requestId);
    expect(line).toMatchObject({ traceId: sent.traceId, operation: 'Send', signals: 2 });
    expect(receiver.spans.some((span) => span.traceId === sent.traceId)).toBe(false);
  });
});

async function waitForLine(entries: Record<string, any>[], requestId: string): Promise<Record<string, any>> {
  const find = () => entries.find((entry) => entry.requestId === requestId && entry.msg === 'request');
  await eventually(() => find() !== undefined, 30_000);
  return find()!;
}
