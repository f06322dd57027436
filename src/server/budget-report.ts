import type http from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext, RateLimitNote } from '../api/context.js';
import type { BucketState } from '../budgets/fair-share.js';

// What a response tells of its caller's budget: the RateLimit headers and `extensions.cost` (useFairShare, the bulk door).
type Context = GraphQLContext & { req?: http.IncomingMessage; request?: Request };

export type ExecuteHooks = Exclude<ReturnType<NonNullable<Plugin<Context>['onExecute']>>, void | Promise<unknown>>;

/** One object for every operation: no closure per request. */
export const ADD_COST_EXTENSION: ExecuteHooks = {
  onExecuteDone({ args, result, setResult }) {
    const note = args.contextValue.rateLimit;
    if (!note || Symbol.asyncIterator in result) return;
    const cost = costExtension(note);
    setResult({ ...result, extensions: result.extensions ? { ...result.extensions, cost } : { cost } });
  },
};

export function setRateLimitHeaders(response: Response, note: Pick<RateLimitNote, 'principalClass' | 'state'>): void {
  const headers = rateLimitHeaders(note.principalClass, note.state);
  response.headers.set('ratelimit-policy', headers['ratelimit-policy']);
  response.headers.set('ratelimit', headers.ratelimit);
}

/** Shopify's shape: what was asked, what was spent, and the bucket after. */
export function costExtension(note: RateLimitNote) {
  return { requestedQueryCost: note.cost, actualQueryCost: note.admitted ? note.cost : 0, throttleStatus: note.state };
}

/** The IETF httpapi draft's fields: the policy (quota, and the seconds it takes to refill) and what is left now. */
export function rateLimitHeaders(policy: string, state: BucketState): { 'ratelimit-policy': string; ratelimit: string } {
  const window = Math.max(1, Math.ceil(state.maximumAvailable / state.restoreRate));
  const untilFull = Math.ceil((state.maximumAvailable - state.currentlyAvailable) / state.restoreRate);
  return {
    'ratelimit-policy': `"${policy}";q=${state.maximumAvailable};w=${window}`,
    ratelimit: `"${policy}";r=${state.currentlyAvailable};t=${untilFull}`,
  };
}
