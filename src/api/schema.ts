import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { builder } from './builder.js';
import './scalars.js';
import './decimal-scalar.js';
import './membership.schema.js';
import './bulk-membership.schema.js';
import './signal.schema.js';
import './signal-batch.schema.js';
import './aggregate.schema.js';
import './contribution.schema.js';
import './purge.schema.js';
import './receipts.schema.js';
import './feed.schema.js';
import './webhooks.schema.js';
import './downstream.schema.js';
import './rate-limit.schema.js';

export const schema: GraphQLSchema = builder.toSchema();

/** The checked-in schema.graphql: sorted so diffs show real changes only. */
export function printSortedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
