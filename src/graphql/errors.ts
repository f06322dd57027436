import { GraphQLError } from 'graphql';

export function badUserInput(message: string, argument?: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: argument ? { code: 'BAD_USER_INPUT', argument } : { code: 'BAD_USER_INPUT' },
  });
}

export function unauthenticated(problem: string | null): GraphQLError {
  return new GraphQLError(`Not authenticated: ${problem ?? 'no bearer token'}.`, { extensions: { code: 'UNAUTHENTICATED' } });
}

export function forbidden(): GraphQLError {
  return new GraphQLError('Not allowed for this caller.', { extensions: { code: 'FORBIDDEN' } });
}
