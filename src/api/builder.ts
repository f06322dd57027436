import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { SCOPES } from '../auth/authenticate.js';
import { scopeLoaders, type AuthScopes } from './auth-rules.js';
import type { GraphQLContext } from './context.js';
import { forbidden, unauthenticated } from '../graphql/errors.js';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  AuthScopes: AuthScopes;
  DefaultFieldNullability: false;
  Scalars: {
    UInt64: { Input: string; Output: string };
    /** Nanoseconds since the Unix epoch. */
    DateTime: { Input: bigint; Output: bigint };
    Decimal: { Input: string; Output: string };
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
    pageInfoTypeOptions: { description: 'Where a page of a connection sits in the whole list.' },
    hasNextPageFieldOptions: { description: 'More items follow: ask again with `after: endCursor`.' },
    hasPreviousPageFieldOptions: { description: 'True when the page was asked for with `after`: items precede it.' },
    startCursorFieldOptions: { description: 'Cursor of the first item of this page; null when it is empty.' },
    endCursorFieldOptions: { description: 'Cursor of the last item of this page; pass it as `after` for the next page.' },
    cursorFieldOptions: { description: 'Where this item sits: pass it as `after` to continue from here.' },
    nodeFieldOptions: { description: 'The item.' },
    edgesFieldOptions: { description: 'The items of this page, with their cursors.' },
    pageInfoFieldOptions: { description: 'How to ask for the next page.' },
  },
});

builder.queryType({ description: 'Reads: where a user stands, aggregates and the contributions ledger.' });
builder.mutationType({ description: 'Writes: leaving, rejoining and sending signals.' });
builder.subscriptionType({ description: 'Live updates, over server-sent events, WebSocket (graphql-ws) or multipart HTTP.' });
