import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { builder } from './builder.js';
import './scalars.js';
import './decimal-scalar.js';
import '../membership/membership.schema.js';
import '../signals/signal.schema.js';
import '../signals/aggregate.schema.js';
import '../signals/contribution.schema.js';
import '../purge/purge.schema.js';

export const schema: GraphQLSchema = builder.toSchema();

/** The checked-in schema.graphql: sorted so diffs show real changes only. */
export function printSortedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
