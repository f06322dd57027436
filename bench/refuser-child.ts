// Forked by refuser.ts: a plain Node.js HTTP server that refuses every request as the fair-share
// door does (the same status, headers and body), and sends its URL back.
import { rateLimitHeaders } from '../src/server/budget-report.js';
import { serveOnLoopback } from './bare-yoga.js';

const STATE = { maximumAvailable: 40, currentlyAvailable: 0, restoreRate: 20 };
const BODY = JSON.stringify({
  errors: [
    {
      message: "This caller's budget is spent; retry after Retry-After.",
      extensions: { code: 'RATE_LIMITED', limit: 'budget', retryAfterSeconds: 1, requestId: '00000000-0000-0000-0000-000000000000' },
    },
  ],
  extensions: { cost: { actualQueryCost: 0, throttleStatus: STATE } },
});
const HEADERS = {
  'retry-after': '1',
  ...rateLimitHeaders('user', STATE),
  'content-type': 'application/json',
  'content-length': Buffer.byteLength(BODY),
  'cache-control': 'no-store',
};

const server = await serveOnLoopback((_req, res) => res.writeHead(429, HEADERS).end(BODY));
process.send!(server.url);
process.once('message', () => void server.close().then(() => process.exit(0)));
// A bench that died leaves no server behind.
process.once('disconnect', () => process.exit(0));
