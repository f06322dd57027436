import type { AsyncLocalStorage } from 'node:async_hooks';
import type http from 'node:http';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Authenticator } from '../auth/authenticate.js';
import type { GraphQLContext, RateLimitNote, Services } from '../api/context.js';
import type { Decision, Refusal } from '../budgets/fair-share.js';
import { membershipChangesOf, type BudgetClass } from '../budgets/principal.js';
import { retryLater } from '../graphql/errors.js';
import { createCostMemo } from '../graphql/limits/cost-model.js';
import { ADD_COST_EXTENSION, costExtension, type ExecuteHooks, setRateLimitHeaders } from './budget-report.js';
import { spentRejoinLimits } from './bulk-rejoin-limits.js';
import { membershipChanges, operationCharge } from './fair-share-charge.js';
import type { Principals } from './fair-share-principals.js';
import { LeaveLine } from './leave-line.js';
import { paidStream } from './paid-stream.js';
import type { RequestRecord } from './request-observer.js';

type Context = GraphQLContext & { req?: http.IncomingMessage; request?: Request };
/** A stream past its budget asks again no sooner than this (a lease may arrive meanwhile). */
const MIN_PAUSE_MS = 20;

/** A charge settled: null (admitted), the refusal, or a leave's `done` once it has waited its turn. */
type Charged = ExecutionResult | (() => void) | null;

/**
 * Fair share at the GraphQL layer: every operation (a subscription when it opens) spends its
 * charge from its caller's budget before it executes, and rejoins spend from the rejoining user's
 * own limit; a refusal is HTTP 429 RATE_LIMITED with Retry-After, nothing executed. An operation
 * made only of leaves is never refused: past the budget it waits for the points, one leave at a time.
 * Every response tells the budget (`RateLimit-Policy`, `RateLimit`, `extensions.cost`): one
 * refused before it executes (a parse or validation error, a bad token) tells its caller's bucket
 * as it stands, nothing spent.
 */
export function useFairShare(
  principals: Principals,
  services: Services,
  requestScope: AsyncLocalStorage<{ record?: RequestRecord }>,
  authenticator: Pick<Authenticator, 'peek' | 'authenticate'>,
): Plugin<Context> {
  const { budgets, of: principalOf } = principals;
  const memo = createCostMemo();
  const { fairShare, metrics } = services;

  const leaveLine = new LeaveLine();

  /**
   * Refused: the answer. A leave past its caller's budget: its turn in the caller's line (a function
   * to call when it is done). Rejoins: the answer once each rejoining user's limit is asked. Else null.
   */
  const charge = (args: ExecutionArgs): Charged | Promise<Charged> => {
    const context = args.contextValue as Context;
    const principal = principalOf(context.viewer, context.req?.socket.remoteAddress ?? 'unknown');
    const cost = operationCharge(args, memo);
    const changes = membershipChanges(args, context.viewer?.userId ?? null);
    if (changes.leavesOnly) {
      // Never refused, by any budget or limit: a leave only ever reduces what the service does for a user.
      const decision = fairShare.take(principal.key, principal.budget, cost);
      context.rateLimit = { principalClass: principal.class, cost, admitted: true, state: decision.state };
      metrics.fairShare.admitted(principal.class, cost);
      if (decision.admitted) return null;
      // Past the budget it waits its turn behind the caller's other leaves, then for the points.
      return leaveLine.join(principal.key).then(async (done) => {
        context.rateLimit!.state = await fairShare.takeWhenAvailable(principal.key, principal.budget, cost);
        return done;
      });
    }
    const decision = fairShare.take(principal.key, principal.budget, cost);
    if (!decision.admitted || (changes.rejoins.length === 0 && changes.bulkRejoins.length === 0))
      return answer(context, principal.class, cost, decision, 'budget');
    return takeRejoins(changes.rejoins).then(async (refused) => {
      // A bulk rejoin is admitted whole: each user past their own limit is refused in its place.
      if (!refused) context.limitedRejoins = await spentRejoinLimits(fairShare, budgets, changes.bulkRejoins);
      return answer(
        context,
        principal.class,
        cost,
        refused ? { ...refused, state: decision.state } : decision,
        refused ? 'membershipChanges' : 'budget',
      );
    });
  };

  /** Each rejoining user's limit, exactly across instances (a rejoin is rare; a round trip is fine): the first refusal, or null. */
  const takeRejoins = async (userIds: readonly string[]): Promise<Refusal | null> => {
    for (const userId of userIds) {
      const rejoins = membershipChangesOf(userId, budgets);
      const taken = await fairShare.takeOneLeased(rejoins.key, rejoins.budget);
      if (!taken.admitted) return taken;
    }
    return null;
  };

  /** The note on the context and the metric; refused, the 429 answer, else null. */
  const answer = (
    context: Context,
    principalClass: BudgetClass,
    cost: number,
    decision: Decision,
    limit: string,
  ): ExecutionResult | null => {
    const note: RateLimitNote = { principalClass, cost, admitted: decision.admitted, state: decision.state };
    context.rateLimit = note;
    (decision.admitted ? metrics.fairShare.admitted : metrics.fairShare.refused)(principalClass, cost);
    if (decision.admitted) return null;
    const record = requestScope.getStore()?.record;
    if (record) record.limited = limit;
    const error = retryLater(
      'RATE_LIMITED',
      limit === 'budget'
        ? `This caller's budget is spent: the operation costs ${cost} and ${decision.state.currentlyAvailable} are available, refilled at ${decision.state.restoreRate} a second.`
        : 'Too many rejoins for this user in a short time; a person never needs this many. Leaving is never limited.',
      { retryAfterSeconds: decision.retryAfterSeconds, status: 429, requestId: context.requestId, details: { limit } },
    );
    return { errors: [error], extensions: { cost: costExtension(note) } };
  };

  // Never charged: the token as the context would have read it (verified tokens are cached), or none.
  const unchargedNote = async (request: Request, serverContext: unknown): Promise<Pick<RateLimitNote, 'principalClass' | 'state'>> => {
    const authorization = request.headers.get('authorization');
    const viewer = authenticator.peek(authorization) ?? (await authenticator.authenticate(authorization)).viewer;
    const address = (serverContext as { req?: http.IncomingMessage }).req?.socket.remoteAddress ?? 'unknown';
    const principal = principalOf(viewer, address);
    return { principalClass: principal.class, state: fairShare.state(principal.key, principal.budget) };
  };

  return {
    onExecute({ args, setResultAndStopExecution }) {
      const settle = (charged: Charged): ExecuteHooks | void => {
        if (charged === null) return ADD_COST_EXTENSION;
        if (typeof charged !== 'function') return setResultAndStopExecution(charged);
        // A leave past the budget has waited its turn and its points; it says when it is done.
        return {
          onExecuteDone(payload) {
            charged();
            return ADD_COST_EXTENSION.onExecuteDone!(payload);
          },
        };
      };
      const charged = charge(args);
      return charged instanceof Promise ? charged.then(settle) : settle(charged);
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      // A subscription is neither a leave nor a rejoin: its charge is answered at once.
      const charged = charge(args) as Charged;
      if (charged !== null && typeof charged !== 'function') return setResultAndStopExecution(charged);
      // Every event after the first costs what the subscription cost to open: replayed history and live alike.
      const context = args.contextValue as Context;
      const note = context.rateLimit;
      if (!note) return;
      const principal = principalOf(context.viewer, context.req?.socket.remoteAddress ?? 'unknown');
      const pay = () => {
        const decision = fairShare.take(principal.key, principal.budget, note.cost);
        if (!decision.admitted)
          return Math.max(MIN_PAUSE_MS, ((note.cost - decision.state.currentlyAvailable) / decision.state.restoreRate) * 1000);
        metrics.fairShare.admitted(principal.class, note.cost);
        return 0;
      };
      return {
        onSubscribeResult({ result, setResult }) {
          if (Symbol.asyncIterator in result) setResult(paidStream(result, pay));
        },
      };
    },
    // Synchronous for a charged operation (every request but a refused one's): a promise here makes the
    // whole response path asynchronous. A single operation's context is the server context Yoga was
    // given; a batch's operations each have their own, so its headers tell the bucket after them all.
    onResponse({ request, response, serverContext }) {
      const note = (serverContext as Partial<Context>).rateLimit;
      if (note) return setRateLimitHeaders(response, note);
      return unchargedNote(request, serverContext).then((uncharged) => setRateLimitHeaders(response, uncharged));
    },
  };
}
