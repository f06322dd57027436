import type { GraphQLSchema } from 'graphql';

/**
 * How admission treats a mutation field, declared beside it in the schema
 * (`extensions: { admission: { … } }`, as `extensions.cost` is) and read by the request plugins
 * (src/server/shed-signals.ts, src/server/fair-share-charge.ts), which know no field by name.
 */
export type FieldAdmission =
  /** Writes signals: while the signal queue is full, refused before its input is read (and counted as shed). */
  | { kind: 'signalIngestion' }
  /** A leave: never refused by a budget or limit (it only ever reduces what the service does for a user). */
  | { kind: 'leave' }
  /** A rejoin: spends the rejoining user's own limit; that user is the named argument, else the caller. */
  | { kind: 'rejoin'; userArgument: string }
  /** A bulk rejoin: spends each named user's own limit; a user whose limit is spent is refused in place, not the call. */
  | { kind: 'rejoinMany'; usersArgument: string };

export const ADMISSION_EXTENSION = 'admission';

/** What the mutation field of that name declares; undefined for none (or no such field). */
export function mutationAdmission(schema: GraphQLSchema, fieldName: string): FieldAdmission | undefined {
  return schema.getMutationType()?.getFields()[fieldName]?.extensions?.[ADMISSION_EXTENSION];
}

/** The mutation fields declared as that kind, by name. */
export function mutationFieldsAdmitted(schema: GraphQLSchema, kind: FieldAdmission['kind']): string[] {
  const fields = Object.values(schema.getMutationType()?.getFields() ?? {});
  return fields.filter((field) => field.extensions?.[ADMISSION_EXTENSION]?.kind === kind).map((field) => field.name);
}

declare module 'graphql' {
  // Same type parameters as graphql's own declaration, which this merges into.
  // biome-ignore lint/suspicious/noExplicitAny: graphql's own declaration, which this merges into, has `= any`.
  interface GraphQLFieldExtensions<_TSource, _TContext, _TArgs = any> {
    admission?: FieldAdmission;
  }
}
