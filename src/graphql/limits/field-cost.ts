/**
 * What a field costs, declared beside it in the schema (`extensions: { cost: { … } }`, its `args`
 * typed like the resolver's) and read by the cost model (`cost-model.ts`) with the request's
 * arguments and variables.
 */
export interface FieldCost<Args> {
  /**
   * How many items the field's lists hold: its own items when it is a list, else the items of the
   * lists directly in its selection (a connection's `edges`).
   */
  listSize?: (args: Args) => number;
  /** What the field writes, counted against the per-request budget. */
  writes?: (args: Args) => Writes;
  /**
   * Points for the field's own work beyond the objects it returns: a mutation whose effects reach
   * every instance (Shopify charges every mutation 10).
   */
  work?: number;
}

export interface Writes {
  signals: number;
  cohortAttributions: number;
}

export const COST_EXTENSION = 'cost';

declare module 'graphql' {
  // Same type parameters as graphql's own declaration, which this merges into.
  // biome-ignore lint/suspicious/noExplicitAny: graphql's own declaration, which this merges into, has `= any`.
  interface GraphQLFieldExtensions<_TSource, _TContext, _TArgs = any> {
    cost?: FieldCost<_TArgs>;
  }
}
