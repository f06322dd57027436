import { GraphQLError } from 'graphql';

/**
 * The stable codes of operation limits, in `extensions.code`. Every one of them is raised before
 * anything executes, so the response has no `data` and is a 400 for
 * application/graphql-response+json (`http.spec`: a 200 for legacy application/json clients, as
 * the GraphQL-over-HTTP spec asks).
 */
export type LimitCode =
  | 'TOO_MANY_TOKENS'
  | 'QUERY_TOO_DEEP'
  | 'TOO_MANY_ALIASES'
  | 'TOO_MANY_DIRECTIVES'
  | 'QUERY_TOO_COMPLEX'
  | 'REQUEST_BUDGET_EXCEEDED';

export function limitError(code: LimitCode, message: string, details: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...details, http: { spec: true, status: 400 } } });
}
