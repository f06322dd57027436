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
   * every instance (Shopify charges every mutation 10); a function of the arguments for a field
   * whose work grows with them (a bulk leave: per user).
   */
  work?: number | ((args: Args) => number);
  /**
   * The field's answer and work are held by a limit of its own (a bulk membership change: its
   * per-call number of users): charged to the caller's budget in full (`boundedCost`), but not held
   * to GRAPHQL_MAX_COST, which is for what a caller can ask freely (pages, aliases).
   */
  bounded?: boolean;
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
