import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import type { GraphQLContext } from './context.js';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  DefaultFieldNullability: false;
  Scalars: {
    UInt64: { Input: string; Output: string };
    DateTime: { Input: Date; Output: Date | string };
  };
}>({
  plugins: [RelayPlugin],
  defaultFieldNullability: false,
  relay: {
    cursorType: 'String',
    clientMutationId: 'omit',
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
});

builder.queryType({});
builder.mutationType({});
