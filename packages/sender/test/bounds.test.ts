import { Sender, type Outcome, type SenderError, type Signal } from '@community-layer/sender';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { eventually, freshDatabase, startApp, token } from '../../../test/support/harness.js';

/**
 * The sender's bounds, installed by name (its dist/): close({ timeoutMs }) and the request timeout
 * against a real loopback server that accepts and never answers; concurrency; a 429 without JSON.
 */
let app: App;
let bearer: string;

beforeAll(async () => {
  app = await startApp(await freshDatabase());
  bearer = await token('1', 'signals:write', '1h');
});
afterAll(() => app?.stop());

/** A real HTTP server on loopback: `answer` decides per request (nothing: it never answers). */
async function peer(answer: (request: number, response: http.ServerResponse) => void = () => {}) {
  let requests = 0;
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((request, response) => {
    open.add(response);
    response.on('close', () => open.delete(response));
    request.resume();
    answer(++requests, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    requests: () => requests,
    open: () => open.size,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const signals = (n: number, prefix: string): Signal[] =>
  Array.from({ length: n }, (_, i) => ({ userId: String(100 + (i % 7)), itemId: `${prefix}-${i}`, kind: 'VIEW' }));

describe('a sender with bounds', () => {
  it('close({ timeoutMs }) against a server that never answers: resolves with every signal unsent, each outcome failed', async () => {
    const silent = await peer();
    // Only close's deadline can end this: no request timeout for an hour, retries plenty.
    const sender = new Sender({ url: silent.url, token: bearer, requestTimeoutMs: 3_600_000, maxBatchSize: 10, concurrency: 2 });
    const sent = signals(35, 'never');
    const outcomes = sent.map((signal) => sender.send(signal));
    await eventually(() => silent.open() === 2);
    const { unsent } = await sender.close({ timeoutMs: 200 });
    expect(unsent.map((signal) => signal.itemId).sort()).toEqual(sent.map((signal) => signal.itemId).sort());
    for (const outcome of await Promise.all(outcomes))
      expect(outcome).toMatchObject({ result: 'failed', reason: expect.stringContaining('close({ timeoutMs })') });
    expect(() => sender.send(sent[0]!)).toThrow('closed');
    await silent.close();
  });

  it('a request timeout ends an unanswered attempt; onError hears every failed attempt and the give-up', async () => {
    const silent = await peer();
    const errors: SenderError[] = [];
    const sender = new Sender({
      url: silent.url,
      token: bearer,
      requestTimeoutMs: 100,
      maxAttempts: 3,
      backoffMs: { initial: 1, max: 5 },
      onError: (error) => errors.push(error),
    });
    const outcome = await sender.send(signals(1, 'timeout')[0]!);
    expect(outcome).toMatchObject({ result: 'failed', reason: expect.stringContaining('requestTimeoutMs') });
    expect(errors.map(({ attempt, willRetry, signals: count }) => ({ attempt, willRetry, count }))).toEqual([
      { attempt: 1, willRetry: true, count: 1 },
      { attempt: 2, willRetry: true, count: 1 },
      { attempt: 3, willRetry: false, count: 1 },
    ]);
    expect(silent.requests()).toBe(3);
    expect(await sender.close()).toEqual({ unsent: [] });
    await silent.close();
  });

  it('concurrency: as many requests in flight as configured, never more', async () => {
    const holding = await peer();
    const sender = new Sender({ url: holding.url, token: bearer, maxBatchSize: 5, concurrency: 3, requestTimeoutMs: 3_600_000 });
    const outcomes = signals(40, 'concurrent').map((signal) => sender.send(signal));
    // Full batches go at once: 8 of them, as many at a time as allowed.
    await eventually(() => holding.open() === 3);
    expect(holding.requests()).toBe(3);
    const { unsent } = await sender.close({ timeoutMs: 0 });
    expect(unsent).toHaveLength(40);
    expect((await Promise.all(outcomes)).every((outcome) => outcome.result === 'failed')).toBe(true);
    await holding.close();
  });

  it('against the real server with 4 requests in flight: every signal forwarded once, close() leaves nothing unsent', async () => {
    const sender = new Sender({ url: app.url, token: bearer, maxBatchSize: 20, concurrency: 4 });
    const outcomes: Promise<Outcome>[] = signals(400, 'real').map((signal) => sender.send(signal));
    expect(await sender.close({ timeoutMs: 30_000 })).toEqual({ unsent: [] });
    const results = await Promise.all(outcomes);
    expect(results.filter((outcome) => outcome.result !== 'forwarded')).toEqual([]);
    expect(new Set(results.map((outcome) => (outcome as { signalId: string }).signalId)).size).toBe(400);
  });

  it('429 without a JSON body (a rate limiter in front): retried after its Retry-After, then delivered', async () => {
    const limited = await peer((request, response) => {
      if (request === 1) return response.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '0' }).end('slow down');
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ data: { sendSignals: { items: [{ signalId: '7', forwarded: true, duplicate: false }] } } }));
    });
    const errors: SenderError[] = [];
    const sender = new Sender({
      url: limited.url,
      token: bearer,
      backoffMs: { initial: 1, max: 5 },
      onError: (error) => errors.push(error),
    });
    expect(await sender.send(signals(1, 'limited')[0]!)).toMatchObject({ result: 'forwarded', signalId: '7' });
    expect(errors).toEqual([{ reason: 'HTTP 429', status: 429, signals: 1, attempt: 1, willRetry: true }]);
    await sender.close();
    await limited.close();
  });
});
