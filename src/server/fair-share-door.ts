import type http from 'node:http';
import { SCOPES, type Authenticator } from '../auth/authenticate.js';
import type { FairShare } from '../budgets/fair-share.js';
import { fairShareConfig } from '../budgets/fair-share-config.js';
import { principalOf } from '../budgets/principal.js';
import type { AppConfig } from '../config/config.js';
import { retryLater } from '../graphql/errors.js';
import { errorResponse, publicError } from '../graphql/public-result.js';
import type { Metrics } from '../observability/metrics.js';
import { rateLimitHeaders } from './fair-share.js';
import type { RequestRecord } from './request-observer.js';

/** Answers true when it refused the request (and wrote the response). */
export type EarlyRefusal = (req: http.IncomingMessage, res: http.ServerResponse, requestId: string, record: RequestRecord) => boolean;

/**
 * A caller whose budget is spent, refused again before its body is parsed: under a flood a refusal
 * must cost next to nothing, or refusing alone would take the others' share of the event loop (as
 * signal shedding does for a full queue). Only callers refused lately, with a token verified
 * lately (or none), and not even one point back; everyone else goes through Yoga, where fair share
 * charges the operation's cost (useFairShare).
 */
export function fairShareDoor(config: AppConfig, fairShare: FairShare, authenticator: Pick<Authenticator, 'peek'>, metrics: Metrics): EarlyRefusal {
  const budgets = fairShareConfig(config.fairShare, SCOPES.admin);
  return (req, res, requestId, record) => {
    if (req.method !== 'POST' && req.method !== 'GET') return false;
    const viewer = authenticator.peek(req.headers.authorization ?? null);
    if (viewer === undefined) return false;
    const principal = principalOf(viewer, req.socket.remoteAddress ?? 'unknown', budgets);
    const refusal = fairShare.refusedAgain(principal.key);
    if (!refusal) return false;
    // Its cost is unknown (the body is not read): it counts as the least an operation costs.
    metrics.fairShare.refusedCost.inc({ class: principal.class }, 1);
    record.limited = 'budget';
    const error = retryLater('RATE_LIMITED', "This caller's budget is spent; retry after Retry-After.", {
      retryAfterSeconds: refusal.retryAfterSeconds,
      status: 429,
      requestId,
      details: { limit: 'budget' },
    });
    const { status, headers } = errorResponse(error);
    const body = { errors: [publicError(error)], extensions: { cost: { actualQueryCost: 0, throttleStatus: refusal.state } } };
    res.writeHead(status, { ...headers, ...rateLimitHeaders(principal.class, refusal.state), 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
    return true;
  };
}
