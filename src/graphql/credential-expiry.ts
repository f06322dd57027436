import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from './context.js';
import { unauthenticated } from './errors.js';

/**
 * A subscription lives no longer than the token it was authorized with, on every transport: at
 * the token's expiry it ends with an UNAUTHENTICATED error, and the client subscribes again with a
 * fresh token.
 */
export function useCredentialExpiry(): Plugin<GraphQLContext> {
  return {
    onSubscribe: ({ args }) => ({
      onSubscribeResult: ({ result, setResult }) => {
        const expiresAt = (args.contextValue as GraphQLContext).credentialsExpireAt;
        if (expiresAt === null || !(Symbol.asyncIterator in result)) return;
        setResult(untilExpiry(result, expiresAt));
      },
    }),
  };
}

const MAX_TIMER_MS = 2 ** 31 - 1;

function untilExpiry(source: AsyncIterable<ExecutionResult>, expiresAtMs: number): AsyncIterableIterator<ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  let state: 'open' | 'expired' | 'done' = 'open';
  const expiry = new Promise<'expired'>((resolve) => {
    // Timers cap at ~24.8 days; a longer-lived token re-arms.
    const arm = () => {
      const remaining = expiresAtMs - Date.now();
      if (remaining <= 0) return resolve('expired');
      timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
    };
    arm();
  });
  const finish = async () => {
    if (state === 'done') return;
    state = 'done';
    clearTimeout(timer);
    await iterator.return?.();
  };
  return {
    async next() {
      if (state !== 'open') {
        await finish();
        return { done: true, value: undefined };
      }
      const outcome = await Promise.race([iterator.next(), expiry]);
      if (outcome === 'expired') {
        state = 'expired';
        void finish();
        return { done: false, value: { errors: [unauthenticated('the token has expired; subscribe again with a fresh one')] } };
      }
      if (outcome.done) {
        state = 'done';
        clearTimeout(timer);
      }
      return outcome;
    },
    async return() {
      await finish();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
