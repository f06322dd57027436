import { GraphQLError, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const SUGGESTION = /\s*Did you mean .+\?$/;

/**
 * Production hides "Did you mean …?" so that error messages do not map the schema for outsiders
 * (graphql 16 has no option for it): from validation errors and from variable coercion errors.
 */
export function useHiddenSuggestions(): Plugin {
  return {
    onValidate:
      () =>
      ({ result, setResult }) => {
        if (result.some((error) => SUGGESTION.test(error.message))) setResult(result.map(withoutSuggestion));
      },
    onExecute: () => ({ onExecuteDone: ({ result, setResult }) => void (isSingle(result) && setResult(stripped(result))) }),
    onSubscribe: () => ({ onSubscribeResult: ({ result, setResult }) => void (isSingle(result) && setResult(stripped(result))) }),
  };
}

function isSingle(result: unknown): result is ExecutionResult {
  return typeof result === 'object' && result !== null && !(Symbol.asyncIterator in result);
}

function stripped(result: ExecutionResult): ExecutionResult {
  return result.errors ? { ...result, errors: result.errors.map(withoutSuggestion) } : result;
}

function withoutSuggestion<E extends Error>(error: E): E | GraphQLError {
  if (!(error instanceof GraphQLError) || !SUGGESTION.test(error.message)) return error;
  return new GraphQLError(error.message.replace(SUGGESTION, ''), {
    nodes: error.nodes,
    path: error.path,
    extensions: error.extensions,
  });
}
