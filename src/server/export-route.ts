import type http from 'node:http';
import type { Logger } from 'pino';
import { SCOPES, type Authenticator } from '../auth/authenticate.js';
import type { FairShare } from '../budgets/fair-share.js';
import { isTransientDatabaseError } from '../db/database-errors.js';
import { EXPORT_PAGE_SIZE, type ExportSink, type UserExports } from '../export/user-export.js';
import { retryLater } from '../graphql/errors.js';
import { isU64 } from '../ids/u64.js';
import { rateLimitHeaders } from './budget-report.js';
import type { Principals } from './fair-share-principals.js';
import { refusal, sendRefusal } from './refusals.js';

export const EXPORT_PATH = '/export';

export interface ExportRouteOptions {
  exports: UserExports;
  authenticator: Pick<Authenticator, 'authenticate'>;
  fairShare: FairShare;
  /** null: fair share is off (nothing charged). */
  principals: Principals | null;
  retryAfterSeconds: number;
  /** Exports at once on this instance: each holds a pooled session for its whole length. */
  maxConcurrent: number;
  logger: Logger;
}

/**
 * `GET /export[?userId=N]`: a user's data as NDJSON (src/export), for the user themselves (their
 * token's user id) or, with `userId`, for a `community:admin` caller. Charged like a paged read:
 * one point per record; the first page (EXPORT_PAGE_SIZE points) is taken before the response
 * starts, so a spent budget is a 429 like any operation's, and past it the stream slows to the
 * refill (as subscriptions do) rather than end.
 */
export function exportRoute(options: ExportRouteOptions) {
  let running = 0;
  return async (req: http.IncomingMessage, res: http.ServerResponse, requestId: string): Promise<void> => {
    const refuse = (status: number, code: string, message: string) =>
      sendRefusal(res, req.headers.accept, refusal(status, code, message, { requestId }));
    const { viewer, problem } = await options.authenticator.authenticate(req.headers.authorization ?? null);
    if (!viewer) return refuse(401, 'UNAUTHENTICATED', `Not authenticated: ${problem}.`);
    const asked = new URL(req.url ?? '/', 'http://localhost').searchParams.get('userId');
    if (asked !== null && !isU64(asked)) return refuse(400, 'BAD_USER_INPUT', 'userId must be a UInt64 (a decimal string).');
    const userId = asked ?? viewer.userId;
    if (userId === null) return refuse(400, 'BAD_USER_INPUT', 'This token names no user: give userId.');
    if (userId !== viewer.userId && !viewer.scopes.has(SCOPES.admin))
      return refuse(403, 'FORBIDDEN', `Only the user or a ${SCOPES.admin} caller may export this user's data.`);
    const principal = options.principals?.of(viewer, req.socket.remoteAddress ?? 'unknown') ?? null;
    let prepaid = 0;
    if (principal) {
      const decision = options.fairShare.take(principal.key, principal.budget, EXPORT_PAGE_SIZE);
      res.setHeader('ratelimit-policy', rateLimitHeaders(principal.class, decision.state)['ratelimit-policy']);
      if (!decision.admitted) {
        const message = `This caller's budget is spent: an export's first page costs ${EXPORT_PAGE_SIZE} and ${decision.state.currentlyAvailable} are available.`;
        const error = retryLater('RATE_LIMITED', message, {
          retryAfterSeconds: decision.retryAfterSeconds,
          status: 429,
          requestId,
          details: { limit: 'budget' },
        });
        return sendRefusal(res, req.headers.accept, error);
      }
      prepaid = EXPORT_PAGE_SIZE;
    }
    if (running >= options.maxConcurrent) {
      const message = 'Too many exports are running on this instance; retry shortly.';
      return sendRefusal(
        res,
        req.headers.accept,
        retryLater('OVERLOADED', message, { retryAfterSeconds: options.retryAfterSeconds, requestId }),
      );
    }
    running++;
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const sink: ExportSink = {
      begin: () =>
        res.writeHead(200, {
          'content-type': 'application/x-ndjson; charset=utf-8',
          'content-disposition': `attachment; filename="community-export-${userId}.ndjson"`,
          'cache-control': 'no-store',
        }),
      async pay(records) {
        const owed = records - Math.min(prepaid, records);
        prepaid -= records - owed;
        if (principal && owed > 0) await options.fairShare.takeWhenAvailable(principal.key, principal.budget, owed);
      },
      write(chunk) {
        if (gone.signal.aborted) throw new Error('the client went away');
        res.write(chunk);
      },
      async drained() {
        if (gone.signal.aborted) throw new Error('the client went away');
        if (!res.writableNeedDrain) return;
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            gone.signal.removeEventListener('abort', done);
            resolve();
          };
          res.once('drain', done);
          gone.signal.addEventListener('abort', done);
        });
      },
    };
    try {
      await options.exports.export(userId, sink);
      res.end();
    } catch (error) {
      if (res.headersSent || gone.signal.aborted) {
        // Begun: no seal line, and the connection is cut, so the client knows it is incomplete.
        if (!gone.signal.aborted) options.logger.warn({ err: error, requestId }, 'export cut off');
        return void res.destroy();
      }
      if (!isTransientDatabaseError(error)) {
        options.logger.error({ err: error, requestId }, 'export failed');
        return refuse(500, 'INTERNAL_SERVER_ERROR', 'The export failed.');
      }
      const message = 'The database is unavailable; retry shortly.';
      sendRefusal(
        res,
        req.headers.accept,
        retryLater('SERVICE_UNAVAILABLE', message, { retryAfterSeconds: options.retryAfterSeconds, requestId }),
      );
    } finally {
      running--;
    }
  };
}
