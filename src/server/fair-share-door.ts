import type http from 'node:http';
import type { Authenticator } from '../auth/authenticate.js';
import type { FairShare } from '../budgets/fair-share.js';
import type { Refusal } from '../budgets/budget-entry.js';
import type { Principal } from '../budgets/principal.js';
import type { AppConfig } from '../config/config.js';
import type { Metrics } from '../observability/metrics.js';
import { rateLimitHeaders } from './budget-report.js';
import type { Principals } from './fair-share-principals.js';
import { receiveBody, withBody } from './received-body.js';
import type { RequestRecord } from './request-observer.js';

/**
 * Answers true when it took the request: refused it (and wrote the response), or read its body to
 * hand it on through `pass` (a leave is never refused here: Yoga charges it).
 */
export type EarlyRefusal = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  requestId: string,
  record: RequestRecord,
  pass: (received: http.IncomingMessage) => void,
) => boolean;

const STREAMS = /text\/event-stream|multipart\/mixed/i;
const MESSAGE = JSON.stringify("This caller's budget is spent; retry after Retry-After.");
/** A persisted document's id may stand for a leave (Yoga tells which). */
const PERSISTED = ['"(?:documentId|doc_id|id)"', 'persistedQuery'];
/** A small body arrives with its headers, or soon after; one that does not is refused. */
const BODY_TIMEOUT_MS = 5_000;

/**
 * A caller whose budget is spent, refused again from its headers alone, before its body is read:
 * under a flood a refusal must cost next to nothing, or refusing alone would take the others'
 * share of the event loop. So no GraphQL, no database, no error object (its stack trace was a
 * third of a refusal's time in `npm run bench:profile -- --only flood`): one small body written
 * as a string, the answer Yoga would give (429 RATE_LIMITED, Retry-After, the RateLimit headers).
 * Only callers refused lately (or whose last point is spent), with a token verified lately (or
 * none), and not even one point back, and not for streams; everyone else goes through Yoga, where fair share charges the operation's cost (useFairShare).
 *
 * A leave is never refused, here either: the small body (up to BULK_REQUEST_BYTES, which a leave
 * always is) of a refused user or admin, who may leave, is read, which the socket does anyway, and
 * scanned, not parsed; one that names a field declared a leave (`leaveFields`) or a persisted
 * document goes on to Yoga. A bulk body, or anyone else's (anonymous, a service), is refused unread.
 */
export function fairShareDoor(
  config: AppConfig,
  principals: Principals,
  leaveFields: readonly string[],
  fairShare: FairShare,
  authenticator: Pick<Authenticator, 'peek'>,
  metrics: Metrics,
): EarlyRefusal {
  const principalOf = principals.of;
  // Field names are GraphQL names ([_A-Za-z][_0-9A-Za-z]*): nothing to escape.
  const namesLeave = new RegExp([...leaveFields, ...PERSISTED].join('|'));
  const refuse = (res: http.ServerResponse, requestId: string, record: RequestRecord, principal: Principal, refusal: Refusal) => {
    // Its cost is unknown (the body is not parsed): it counts as the least an operation costs.
    metrics.fairShare.refused(principal.class, 1);
    record.limited = 'budget';
    const { retryAfterSeconds, state } = refusal;
    const extensions = `{"code":"RATE_LIMITED","limit":"budget","retryAfterSeconds":${retryAfterSeconds},"requestId":${JSON.stringify(requestId)}}`;
    const cost = `{"actualQueryCost":0,"throttleStatus":{"maximumAvailable":${state.maximumAvailable},"currentlyAvailable":${state.currentlyAvailable},"restoreRate":${state.restoreRate}}}`;
    const body = `{"errors":[{"message":${MESSAGE},"extensions":${extensions}}],"extensions":{"cost":${cost}}}`;
    res.writeHead(429, {
      'retry-after': String(retryAfterSeconds),
      ...rateLimitHeaders(principal.class, state),
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    });
    res.end(body);
  };
  return (req, res, requestId, record, pass) => {
    // Nobody is refused lately: nothing to look up (this is every request but a flood's).
    if (!fairShare.refusing) return false;
    if (req.method !== 'POST' && req.method !== 'GET') return false;
    // A stream (SSE, multipart) is refused by Yoga, in the stream's own form (it pays per event: useFairShare).
    if (STREAMS.test(req.headers.accept ?? '')) return false;
    const viewer = authenticator.peek(req.headers.authorization ?? null);
    if (viewer === undefined) return false;
    const principal = principalOf(viewer, req.socket.remoteAddress ?? 'unknown');
    const refusal = fairShare.refusedAgain(principal.key);
    if (!refusal) return false;
    // Only a user (for themselves) or an admin may leave: anyone else's body is never worth reading.
    const mayLeave = principal.class === 'user' || principal.class === 'admin';
    const smallBody = req.method === 'POST' && Number(req.headers['content-length']) <= config.bulk.requestBytes;
    if (!mayLeave || !smallBody) {
      refuse(res, requestId, record, principal, refusal);
      return true;
    }
    void receiveBody(req, BODY_TIMEOUT_MS).then((reception) => {
      if (reception === 'gone') return;
      if (reception !== 'late' && namesLeave.test(reception.body.toString('latin1'))) return pass(withBody(req, reception.body));
      refuse(res, requestId, record, principal, refusal);
    });
    return true;
  };
}
