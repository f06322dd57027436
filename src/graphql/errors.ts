import { GraphQLError } from 'graphql';

export type ErrorCode = 'BAD_USER_INPUT' | 'UNAUTHENTICATED' | 'FORBIDDEN';

export function badUserInput(message: string, argument?: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: argument ? { code: 'BAD_USER_INPUT', argument } : { code: 'BAD_USER_INPUT' },
  });
}
