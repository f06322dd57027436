import http from 'node:http';
import type { App } from '../../src/app.js';
import type { GraphQLResponse } from './harness.js';

/** A POST whose last byte is held back: the server has the headers and waits for the rest. */
export function heldBackPost(app: App, bearer: string, body: string) {
  const bytes = Buffer.from(body);
  const request = http.request(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': bytes.length, authorization: `Bearer ${bearer}` },
  });
  const response = new Promise<{ status: number; retryAfter: string | undefined; body: Omit<GraphQLResponse, 'status'> }>(
    (resolve, reject) => {
      request.once('error', reject);
      request.once('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () =>
          resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      });
    },
  );
  request.write(bytes.subarray(0, -1));
  return { response, finish: () => request.end(bytes.subarray(-1)), abandon: () => request.destroy() };
}
