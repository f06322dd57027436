import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Plugin } from 'graphql-yoga';

/**
 * Marks a request decoded once its operation has run up to its first real wait: graphql-js
 * coerces the variables and runs the resolvers' synchronous part (validation, queueing the
 * signals) in the same turn as `execute`, so a setImmediate from onExecute fires after all of it.
 */
export function useBulkDecoded(scope: AsyncLocalStorage<{ decoded?: () => void }>): Plugin {
  return {
    onExecute() {
      const decoded = scope.getStore()?.decoded;
      if (decoded) setImmediate(decoded);
    },
  };
}
