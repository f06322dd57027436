// Forked by refuser.ts: a plain Node.js HTTP server that refuses every request as the fair-share
// door does (the same status, headers and body), and sends its URL back.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const BODY = JSON.stringify({
  errors: [{ message: "This caller's budget is spent; retry after Retry-After.", extensions: { code: 'RATE_LIMITED', limit: 'budget', retryAfterSeconds: 1, requestId: '00000000-0000-0000-0000-000000000000' } }],
  extensions: { cost: { actualQueryCost: 0, throttleStatus: { maximumAvailable: 40, currentlyAvailable: 0, restoreRate: 20 } } },
});
const HEADERS = {
  'retry-after': '1',
  'ratelimit-policy': '"user";q=40;w=2',
  ratelimit: '"user";r=0;t=1',
  'content-type': 'application/json',
  'content-length': Buffer.byteLength(BODY),
  'cache-control': 'no-store',
};

const server = http.createServer((_req, res) => res.writeHead(429, HEADERS).end(BODY));
server.listen(0, '127.0.0.1', () => process.send!(`http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`));
process.once('message', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
// A bench that died leaves no server behind.
process.once('disconnect', () => process.exit(0));
