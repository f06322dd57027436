import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  getVariableValues,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  typeFromAST,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLInputField,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLSchema,
  type SelectionSetNode,
  type VariableDefinitionNode,
} from 'graphql';
import { COST_EXTENSION, type FieldCost, type Writes } from './field-cost.js';

/** Items assumed for a list whose size no argument states (e.g. a membership's history). */
export const DEFAULT_LIST_SIZE = 20;

export interface Measure extends Writes {
  /** Objects the response can hold: every object-typed field once per item of its list. */
  cost: number;
}

const NOTHING: Measure = { cost: 0, signals: 0, cohortAttributions: 0 };

/**
 * The one cost model: what an operation can return (`cost`) and write (`signals`,
 * `cohortAttributions`), from its document and its coerced variables, so `first: $n` counts like
 * `first: 500` and a 1000-entry `$inputs` like a 1000-entry literal. Every alias and every fragment
 * spread counts, as each one executes.
 *
 * - An object-typed field costs 1 per object; scalar and enum fields cost nothing.
 * - A list multiplies its selection by its size: the field's `listSize`, else the `listSize` of the
 *   field around it (a connection's `first` sizes its `edges`), else DEFAULT_LIST_SIZE.
 * - Introspection (`__schema`, `__type`) is not counted: it is bounded by the schema, and held by
 *   the depth and alias limits (and off in production).
 *
 * Returns null when the operation cannot run at all (unknown operation name, variables that fail
 * coercion): execution reports that before anything resolves.
 */
export function measureOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
): Measure | null {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return null;
  const variables = coercedVariables(schema, operation.variableDefinitions ?? [], rawVariables ?? {});
  if (!variables) return null;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return new CostWalk(schema, fragments, variables).selection(operation.selectionSet, root, undefined);
}

/**
 * The variables as coercion makes them, or null if they fail it. The executor coerces them again
 * (nothing hands it ours), and for 1000 nested signal inputs coercion is a large part of a call's
 * CPU; so when the raw values already are what coercion would return, they are used as they are:
 * then the cost functions read exactly what they would read after coercion.
 */
function coercedVariables(
  schema: GraphQLSchema,
  definitions: readonly VariableDefinitionNode[],
  raw: Record<string, unknown>,
): Record<string, unknown> | null {
  const asIs = definitions.every((definition) => {
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    const value = raw[definition.variable.name.value];
    // Absent: coercion fills in a default or refuses a missing non-null one; either is not "as is".
    if (value === undefined) return type !== undefined && definition.defaultValue === undefined && !isNonNullType(type);
    return type !== undefined && coercesToItself(value, type);
  });
  if (asIs) return raw;
  const variables = getVariableValues(schema, definitions, raw, { maxErrors: 1 });
  return variables.errors ? null : variables.coerced;
}

/** Input fields per type, listed once (graphql-js lists them anew for every object it coerces). */
const inputFields = new WeakMap<GraphQLInputObjectType, readonly GraphQLInputField[]>();

/**
 * Whether graphql-js would coerce `value` into an equal value: lists are arrays (not a single value
 * that becomes a list of one), objects name only known fields and leave none to a default, no null
 * where one is required, and every scalar and enum value parses to itself. Allocates nothing.
 */
function coercesToItself(value: unknown, type: GraphQLInputType): boolean {
  if (isNonNullType(type)) return value !== null && value !== undefined && coercesToItself(value, type.ofType);
  if (value === null) return true;
  if (isListType(type)) {
    if (!Array.isArray(value)) return false;
    for (const item of value) if (!coercesToItself(item, type.ofType)) return false;
    return true;
  }
  if (isInputObjectType(type)) {
    if (typeof value !== 'object' || Array.isArray(value) || type.isOneOf) return false;
    const object = value as Record<string, unknown>;
    const known = type.getFields();
    for (const key in object) if (known[key] === undefined) return false;
    let fields = inputFields.get(type);
    if (!fields) inputFields.set(type, (fields = Object.values(known)));
    for (const field of fields) {
      const fieldValue = object[field.name];
      if (fieldValue === undefined ? field.defaultValue !== undefined || isNonNullType(field.type) : !coercesToItself(fieldValue, field.type)) return false;
    }
    return true;
  }
  try {
    return (isEnumType(type) ? type.parseValue(value, true) : type.parseValue(value)) === value;
  } catch {
    return false;
  }
}

class CostWalk {
  /** Per fragment and inherited list size: a fragment spread many times is measured once. */
  private readonly fragmentMeasures = new Map<string, Measure>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    private readonly variables: Record<string, unknown>,
  ) {}

  selection(selectionSet: SelectionSetNode, type: GraphQLCompositeType, inheritedSize: number | undefined): Measure {
    let total = NOTHING;
    for (const selection of selectionSet.selections) {
      let part: Measure;
      if (selection.kind === Kind.FIELD) {
        part = this.field(selection, type, inheritedSize);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        part = this.selection(selection.selectionSet, this.conditionType(selection.typeCondition?.name.value) ?? type, inheritedSize);
      } else {
        part = this.fragment(selection.name.value, inheritedSize);
      }
      total = add(total, part, 1);
    }
    return total;
  }

  private fragment(name: string, inheritedSize: number | undefined): Measure {
    const key = `${name}\u0000${inheritedSize ?? ''}`;
    const known = this.fragmentMeasures.get(key);
    if (known) return known;
    const fragment = this.fragments.get(name);
    const type = fragment && this.conditionType(fragment.typeCondition.name.value);
    // Validation already refused unknown fragments and cycles; the guard keeps this total.
    this.fragmentMeasures.set(key, NOTHING);
    const measure = fragment && type ? this.selection(fragment.selectionSet, type, inheritedSize) : NOTHING;
    this.fragmentMeasures.set(key, measure);
    return measure;
  }

  private field(node: FieldNode, parent: GraphQLCompositeType, inheritedSize: number | undefined): Measure {
    if (node.name.value.startsWith('__')) return NOTHING;
    const definition = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[node.name.value] : undefined;
    if (!definition) return NOTHING;
    const declaration = definition.extensions?.[COST_EXTENSION] as FieldCost<Record<string, unknown>> | undefined;
    let args: Record<string, unknown> = {};
    if (declaration) {
      try {
        args = getArgumentValues(definition, node, this.variables);
      } catch {
        // Arguments that fail coercion fail the field before its resolver runs: it costs nothing.
        return NOTHING;
      }
    }
    const declaredSize = size(declaration?.listSize?.(args));
    const isList = isListType(getNullableType(definition.type));
    const items = isList ? (declaredSize ?? inheritedSize ?? DEFAULT_LIST_SIZE) : 1;
    const type = getNamedType(definition.type);
    const composite = isCompositeType(type);
    const below = composite && node.selectionSet ? this.selection(node.selectionSet, type, isList ? undefined : declaredSize) : NOTHING;
    const own = declaration?.writes?.(args) ?? NOTHING;
    return add({ cost: 0, signals: own.signals, cohortAttributions: own.cohortAttributions }, { ...below, cost: below.cost + (composite ? 1 : 0) }, items);
  }

  private conditionType(name: string | undefined): GraphQLCompositeType | undefined {
    const type = name === undefined ? undefined : this.schema.getType(name);
    return type && isCompositeType(type) ? type : undefined;
  }
}

function size(value: number | undefined): number | undefined {
  return value === undefined || !Number.isFinite(value) ? undefined : Math.max(0, value);
}

function add(base: Measure, part: Measure, times: number): Measure {
  return {
    cost: base.cost + times * part.cost,
    signals: base.signals + times * part.signals,
    cohortAttributions: base.cohortAttributions + times * part.cohortAttributions,
  };
}
