import { SettingsClient, SettingsClientError } from '@community-layer/settings-client';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The settings client, installed by name (its dist/), against a real loopback server that accepts
 * every request and never answers, and one that answers 429 without JSON (a rate limiter in front).
 */
let silent: http.Server;
let limited: http.Server;
const urlOf = (server: http.Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;

beforeAll(async () => {
  silent = http.createServer((request) => void request.resume());
  limited = http.createServer(
    (_request, response) => void response.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '7' }).end('slow down'),
  );
  await Promise.all([silent, limited].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
});

afterAll(async () => {
  for (const server of [silent, limited]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('expected a refusal'),
    (error: unknown) => error,
  );

describe('the settings client’s bounds', () => {
  it('a call the server never answers fails after requestTimeoutMs: NETWORK, retryable', async () => {
    const client = new SettingsClient({ url: urlOf(silent), token: 'any', requestTimeoutMs: 100 });
    const error = await refusal(client.status());
    expect(error).toBeInstanceOf(SettingsClientError);
    expect(error).toMatchObject({ code: 'NETWORK', retryable: true, message: expect.stringContaining('requestTimeoutMs') });
  });

  it('429 without a GraphQL body is retryable, with its Retry-After', async () => {
    const client = new SettingsClient({ url: urlOf(limited), token: 'any' });
    expect(await refusal(client.leave())).toMatchObject({ code: 'HTTP_429', status: 429, retryable: true, retryAfterSeconds: 7 });
  });
});
