import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, freshDatabase, metric, startApp, token } from './support/harness.js';

/**
 * Every HTTP refusal, sent for real, answers with a GraphQL-over-HTTP error body carrying
 * `extensions.code`, in the JSON media type asked for: the ones made before Yoga reads the request
 * (411, 413, the bulk door's 503, 404), the ones Node's parser makes before any handler (431, 400)
 * and one of Yoga's own (429) beside them.
 */
let app: App;
let bearer: string;
const SIGNALS = 'mutation ($i: [SignalInput!]!) { signals(inputs: $i) { signalId } }';
const batch = (tag: string, size: number, userId = '7') => {
  const inputs = Array.from({ length: size }, (_, i) => ({ userId, itemId: `${tag}-${i}`, kind: 'VIEW' }));
  return JSON.stringify({ query: SIGNALS, variables: { i: inputs } });
};

beforeAll(async () => {
  app = await startApp(
    await freshDatabase(),
    {
      BODY_LIMIT_BYTES: '65536',
      FAIR_SHARE_USER_CAPACITY: '100',
      FAIR_SHARE_USER_RATE: '1',
      FAIR_SHARE_SERVICES: 'bulk-sender=100000/1000',
      // One batch decoding and one waiting; bodies held back stay until the test finishes them.
      BULK_REQUEST_BYTES: '1024',
      BULK_REQUESTS_MAX: '1',
      BULK_REQUESTS_WAITING_MAX: '1',
      BULK_MAX_EVENT_LOOP_UTILIZATION: '1',
      BULK_BODY_TIMEOUT_MS: '600000',
    },
    { membershipSync: false },
  );
  bearer = await token('7', 'signals:write');
});
afterAll(() => app?.stop());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { errors: { message: string; extensions: Record<string, unknown> }[] };
}

/** A request through node:http, so that its framing (no length, huge headers, a held-back body) is what it says. */
function request(options: http.RequestOptions, body?: Buffer | string, hold = false) {
  const req = http.request(app.url, { method: 'POST', ...options });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () => {
        const text = Buffer.concat(chunks).toString();
        try {
          resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) });
        } catch {
          reject(new Error(`${res.statusCode}, not a JSON body: ${JSON.stringify(text.slice(0, 200))}`));
        }
      });
    });
  });
  const bytes = body === undefined ? undefined : Buffer.from(body);
  if (bytes && hold) req.write(bytes.subarray(0, -1));
  else req.end(bytes);
  return { answer, finish: () => req.end(bytes?.subarray(-1)) };
}

/** Raw bytes on a socket, for what node:http would not send; the whole answer, parsed. */
function raw(bytes: string): Promise<Answer> {
  const { port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk)).once('error', reject);
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString();
      const [head, body] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
      const fields = head
        .split('\r\n')
        .slice(1)
        .map((line) => line.split(/:\s*/, 2) as [string, string]);
      const headers = Object.fromEntries(fields.map(([name, value]) => [name.toLowerCase(), value]));
      try {
        resolve({ status: Number(head.split(' ')[1]), headers, body: JSON.parse(body) });
      } catch {
        reject(new Error(`not a JSON body: ${JSON.stringify(text.slice(0, 200))}`));
      }
    });
  });
}

function expectRefusal(answer: Answer, status: number, code: string, mediaType = 'application/json') {
  expect({ status: answer.status, code: answer.body.errors[0]?.extensions.code }).toEqual({ status, code });
  expect(answer.body.errors[0]!.message).toMatch(/\S/);
  expect(answer.headers['content-type']).toBe(`${mediaType}; charset=utf-8`);
}

const json = { 'content-type': 'application/json', accept: 'application/json' };
const signed = (bearer: string, body: string) => ({
  ...json,
  authorization: `Bearer ${bearer}`,
  'content-length': Buffer.byteLength(body),
});

describe('every HTTP refusal has a GraphQL error body with extensions.code', () => {
  it('411: a POST without a Content-Length (chunked)', async () => {
    const { answer } = request({ headers: { ...json, 'transfer-encoding': 'chunked' } }, '{"query":"{ __typename }"}');
    expectRefusal(await answer, 411, 'LENGTH_REQUIRED');
  });

  it('413: a body over BODY_LIMIT_BYTES, in the media type asked for', async () => {
    const big = JSON.stringify({ query: '{ __typename }', extensions: { pad: 'x'.repeat(70_000) } });
    const accept = 'application/graphql-response+json';
    const { answer } = request({ headers: { ...signed(bearer, big), accept } }, big);
    const refused = await answer;
    expectRefusal(refused, 413, 'PAYLOAD_TOO_LARGE', 'application/graphql-response+json');
    expect(refused.body.errors[0]!.extensions.limitBytes).toBe(65536);
  });

  it("431: headers over Node's limit, refused by its parser before any handler runs", async () => {
    const head = ['GET /graphql?query=%7B__typename%7D HTTP/1.1', 'host: x', 'accept: application/json'];
    head.push(`x-big: ${'a'.repeat(20_000)}`);
    const answer = await raw(`${head.join('\r\n')}\r\n\r\n`);
    expectRefusal(answer, 431, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
  });

  it("400: a request that is not HTTP, refused by Node's parser", async () => {
    expectRefusal(await raw('HELLO THERE\r\n\r\n'), 400, 'BAD_REQUEST');
  });

  it('404: a path nobody serves', async () => {
    const { answer } = request({ method: 'GET', path: '/settings/nope', headers: { accept: 'application/json' } });
    expectRefusal(await answer, 404, 'NOT_FOUND');
  });

  it('429: a batch beyond the caller’s budget (Yoga’s own refusal, for comparison)', async () => {
    const body = batch('over-budget', 150);
    const { answer } = request({ headers: signed(bearer, body) }, body);
    const refused = await answer;
    expectRefusal(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('503: a bulk request beyond the places at the door, with Retry-After', async () => {
    // A service with a large budget of its own: these cases are about places at the door.
    const sender = await token('bulk-sender', 'signals:write');
    const held = (tag: string) => {
      const body = batch(tag, 30, '8');
      return request({ headers: signed(sender, body) }, body, true);
    };
    const first = held('first');
    await eventually(async () => (await metric(app, 'community_bulk_requests_waiting')) === 1);
    const second = held('second');
    await eventually(async () => (await metric(app, 'community_bulk_requests_waiting')) === 2);
    const third = held('third');
    third.finish();
    const refused = await third.answer;
    expectRefusal(refused, 503, 'OVERLOADED');
    expect(refused.headers['retry-after']).toBe('1');
    first.finish();
    second.finish();
    expect((await first.answer).status).toBe(200);
    expect((await second.answer).status).toBe(200);
  });
});
