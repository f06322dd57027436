import {
  getVariableValues,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
  type GraphQLInputField,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLSchema,
  type VariableDefinitionNode,
} from 'graphql';

/**
 * The variables as coercion makes them, or null if they fail it. The executor coerces them again
 * (nothing hands it ours), and for 1000 nested signal inputs coercion is a large part of a call's
 * CPU; so when the raw values already are what coercion would return, they are used as they are:
 * then the cost functions read exactly what they would read after coercion.
 */
export function coercedVariables(
  schema: GraphQLSchema,
  definitions: readonly VariableDefinitionNode[],
  raw: Record<string, unknown>,
  memo: CoercionMemo,
): Record<string, unknown> | null {
  const asIs = definitions.every((definition) => {
    const type = variableType(schema, definition, memo);
    const value = raw[definition.variable.name.value];
    // Absent: coercion fills in a default or refuses a missing non-null one; either is not "as is".
    if (value === undefined) return type !== undefined && definition.defaultValue === undefined && !isNonNullType(type);
    return type !== undefined && coercesToItself(value, type, memo);
  });
  if (asIs) return raw;
  const variables = getVariableValues(schema, definitions, raw, { maxErrors: 1 });
  return variables.errors ? null : variables.coerced;
}

/**
 * What coercion remembers between operations, for one schema (one per app, through its operation
 * limits): each variable's type (typeFromAST builds a new wrapper type every time) and each input
 * type's fields (graphql-js lists them anew for every object it coerces).
 */
export interface CoercionMemo {
  variableTypes: WeakMap<VariableDefinitionNode, GraphQLInputType | undefined>;
  inputFields: WeakMap<GraphQLInputObjectType, readonly GraphQLInputField[]>;
}

export function createCoercionMemo(): CoercionMemo {
  return { variableTypes: new WeakMap(), inputFields: new WeakMap() };
}

function variableType(
  schema: GraphQLSchema,
  definition: VariableDefinitionNode,
  { variableTypes }: CoercionMemo,
): GraphQLInputType | undefined {
  if (!variableTypes.has(definition)) variableTypes.set(definition, typeFromAST(schema, definition.type) as GraphQLInputType | undefined);
  return variableTypes.get(definition);
}

/**
 * Whether graphql-js would coerce `value` into an equal value: lists are arrays (not a single value
 * that becomes a list of one), objects name only known fields and leave none to a default, no null
 * where one is required, and every scalar and enum value parses to itself. Allocates nothing.
 */
export function coercesToItself(value: unknown, type: GraphQLInputType, memo: CoercionMemo): boolean {
  if (isNonNullType(type)) return value !== null && value !== undefined && coercesToItself(value, type.ofType, memo);
  if (value === null) return true;
  if (isListType(type)) {
    if (!Array.isArray(value)) return false;
    for (const item of value) if (!coercesToItself(item, type.ofType, memo)) return false;
    return true;
  }
  if (isInputObjectType(type)) {
    if (typeof value !== 'object' || Array.isArray(value) || type.isOneOf) return false;
    const object = value as Record<string, unknown>;
    const known = type.getFields();
    for (const key in object) if (known[key] === undefined) return false;
    let fields = memo.inputFields.get(type);
    if (!fields) memo.inputFields.set(type, (fields = Object.values(known)));
    for (const field of fields) {
      const fieldValue = object[field.name];
      if (
        fieldValue === undefined
          ? field.defaultValue !== undefined || isNonNullType(field.type)
          : !coercesToItself(fieldValue, field.type, memo)
      )
        return false;
    }
    return true;
  }
  try {
    return (isEnumType(type) ? type.parseValue(value, true) : type.parseValue(value)) === value;
  } catch {
    return false;
  }
}
