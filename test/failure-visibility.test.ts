import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { startOtlpReceiver, type OtlpReceiver } from '../tooling/otlp-receiver.js';
import { capturedLog, eventually, freshDatabase, metric, startApp, token } from './support/harness.js';

/**
 * Failed operations look failed (issue 38): a GraphQL error answered with HTTP 200 (as GraphQL over
 * HTTP allows for `application/json`) still shows in the access line, the span and the counter.
 */

const QUERY = 'query Me { communityLayerStatus { status } }';

let receiver: OtlpReceiver;
let app: App;
const log = capturedLog();

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  app = await startApp(
    await freshDatabase(),
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'community-layer-test', OTEL_BSP_SCHEDULE_DELAY: '50' },
    { logger: log.logger },
  );
});

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
});

/** `Me` with `bearer`, traced by the caller, as a plain `application/json` client sends it. */
async function ask(bearer: string) {
  const [traceId, requestId] = [randomBytes(16).toString('hex'), `req-${randomBytes(4).toString('hex')}`];
  const response = await fetch(app.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: `Bearer ${bearer}`,
      traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      'x-request-id': requestId,
    },
    body: JSON.stringify({ query: QUERY, operationName: 'Me' }),
  });
  const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
  await eventually(() => log.entries.some((entry) => entry.requestId === requestId && entry.msg === 'request'), 30_000);
  const line = log.entries.find((entry) => entry.requestId === requestId && entry.msg === 'request')!;
  const span = await receiver.waitFor((candidate) => candidate.traceId === traceId && candidate.name === 'query Me');
  return { status: response.status, body, line, span };
}

const operations = (outcome: string, code: string) =>
  metric(app, 'graphql_operations_total', { operation: 'other', type: 'query', outcome, code });

describe('failures are visible', () => {
  it('a bad token: HTTP 200 with UNAUTHENTICATED, and the access line, the span and the counter say rejected', async () => {
    const before = await operations('rejected', 'UNAUTHENTICATED');
    const failed = await ask('not.a.token');
    expect(failed.status).toBe(200);
    expect(failed.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(failed.line).toMatchObject({ log: 'access', status: 200, outcome: 'rejected', errors: ['UNAUTHENTICATED'], operation: 'Me' });
    expect(failed.span.status).toEqual({ code: 2, message: 'UNAUTHENTICATED' });
    expect(failed.span.attributes).toMatchObject({ 'graphql.outcome': 'rejected', 'graphql.error.codes': 'UNAUTHENTICATED' });
    expect(await operations('rejected', 'UNAUTHENTICATED')).toBe(before + 1);
  });

  it('a good one: ok in the access line, the span status unset, counted ok', async () => {
    const before = await operations('ok', 'none');
    const answered = await ask(await token('4242'));
    expect(answered.status).toBe(200);
    expect(answered.body.errors).toBeUndefined();
    expect(answered.line).toMatchObject({ status: 200, outcome: 'ok', operation: 'Me' });
    expect(answered.line).not.toHaveProperty('errors');
    expect(answered.span.status.code).toBe(0);
    expect(answered.span.attributes).not.toHaveProperty('graphql.outcome');
    expect(await operations('ok', 'none')).toBe(before + 1);
  });

  it('a document that does not parse is counted too, before any execution', async () => {
    const before = await metric(app, 'graphql_operations_total', {
      operation: 'other',
      type: 'unknown',
      outcome: 'rejected',
      code: 'GRAPHQL_PARSE_FAILED',
    });
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await token('4242')}` },
      body: JSON.stringify({ query: '{ communityLayerStatus {' }),
    });
    const body = (await response.json()) as { errors: { extensions?: { code?: string } }[] };
    expect(body.errors[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(
      await metric(app, 'graphql_operations_total', {
        operation: 'other',
        type: 'unknown',
        outcome: 'rejected',
        code: 'GRAPHQL_PARSE_FAILED',
      }),
    ).toBe(before + 1);
  });
});
