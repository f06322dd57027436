import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { SCOPES } from '../auth/authenticate.js';
import { scopeLoaders, type AuthScopes } from '../auth/rules.js';
import type { GraphQLContext } from './context.js';
import { forbidden, unauthenticated } from './errors.js';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  AuthScopes: AuthScopes;
  DefaultFieldNullability: false;
  Scalars: {
    UInt64: { Input: string; Output: string };
    /** Nanoseconds since the Unix epoch. */
    DateTime: { Input: bigint; Output: bigint };
  };
}>({
  plugins: [ScopeAuthPlugin, RelayPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (context) => scopeLoaders(context.viewer, SCOPES),
    unauthorizedError: (_parent, context) => (context.viewer ? forbidden() : unauthenticated(context.authProblem)),
  },
  relay: {
    cursorType: 'String',
    clientMutationId: 'omit',
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
