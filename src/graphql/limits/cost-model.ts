import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { coercedVariables, createCoercionMemo, type CoercionMemo } from './coerced-variables.js';
import { COST_EXTENSION, type FieldCost, type Writes } from './field-cost.js';

/** Items assumed for a list whose size no argument states (e.g. a membership's history). */
const DEFAULT_LIST_SIZE = 20;

export interface Measure extends Writes {
  /** Objects the response can hold: every object-typed field once per item of its list. */
  cost: number;
  /** The cost of fields declared `bounded` (their own limit holds them): charged, not held to the operation's maximum cost. */
  boundedCost: number;
}

const NOTHING: Measure = { cost: 0, boundedCost: 0, signals: 0, cohortAttributions: 0 };

/**
 * What the cost model remembers between operations, for one schema (one per app, through its
 * operation limits). `invariantMeasures`: measures of selections with no cost declaration in them
 * (no fragment's either), per type and inherited list size: only declarations read arguments, so
 * these do not depend on the variables, and a document seen before pays a lookup for them (a
 * `signal`'s whole payload).
 */
export interface CostMemo {
  invariantMeasures: WeakMap<SelectionSetNode, Map<string, Measure>>;
  coercion: CoercionMemo;
}

export function createCostMemo(): CostMemo {
  return { invariantMeasures: new WeakMap(), coercion: createCoercionMemo() };
}

/**
 * The one cost model: what an operation can return (`cost`) and write (`signals`,
 * `cohortAttributions`), from its document and its coerced variables, so `first: $n` counts like
 * `first: 500` and a 1000-entry `$inputs` like a 1000-entry literal. Every alias and every fragment
 * spread counts, as each one executes.
 *
 * - An object-typed field costs 1 per object; scalar and enum fields cost nothing; a field's
 *   declared `work` adds to that. A field declared `bounded` counts in `boundedCost` instead.
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
  memo: CostMemo,
): Measure | null {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return null;
  const variables = coercedVariables(schema, operation.variableDefinitions ?? [], rawVariables ?? {}, memo.coercion);
  if (!variables) return null;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return new CostWalk(schema, fragments, variables, memo.invariantMeasures).selection(operation.selectionSet, root, undefined);
}

class CostWalk {
  /** Per fragment and inherited list size: a fragment spread many times is measured once. */
  private readonly fragmentMeasures = new Map<string, { measure: Measure; declarations: number }>();
  /** Cost declarations read so far: a selection that adds none is invariant. */
  private declarations = 0;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    private readonly variables: Record<string, unknown>,
    private readonly invariantMeasures: CostMemo['invariantMeasures'],
  ) {}

  selection(selectionSet: SelectionSetNode, type: GraphQLCompositeType, inheritedSize: number | undefined): Measure {
    const key = `${type.name}\u0000${inheritedSize ?? ''}`;
    const invariant = this.invariantMeasures.get(selectionSet)?.get(key);
    if (invariant) return invariant;
    const declarationsBefore = this.declarations;
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
    if (this.declarations === declarationsBefore) {
      let measures = this.invariantMeasures.get(selectionSet);
      if (!measures) this.invariantMeasures.set(selectionSet, (measures = new Map()));
      measures.set(key, total);
    }
    return total;
  }

  private fragment(name: string, inheritedSize: number | undefined): Measure {
    const key = `${name}\u0000${inheritedSize ?? ''}`;
    const known = this.fragmentMeasures.get(key);
    if (known) {
      // Spread again: it reads the same declarations again, so the selection around it is not invariant.
      this.declarations += known.declarations;
      return known.measure;
    }
    const fragment = this.fragments.get(name);
    const type = fragment && this.conditionType(fragment.typeCondition.name.value);
    // Validation already refused unknown fragments and cycles; the guard keeps this total.
    this.fragmentMeasures.set(key, { measure: NOTHING, declarations: 0 });
    const declarationsBefore = this.declarations;
    const measure = fragment && type ? this.selection(fragment.selectionSet, type, inheritedSize) : NOTHING;
    this.fragmentMeasures.set(key, { measure, declarations: this.declarations - declarationsBefore });
    return measure;
  }

  private field(node: FieldNode, parent: GraphQLCompositeType, inheritedSize: number | undefined): Measure {
    if (node.name.value.startsWith('__')) return NOTHING;
    const definition = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[node.name.value] : undefined;
    if (!definition) return NOTHING;
    const declaration = definition.extensions?.[COST_EXTENSION] as FieldCost<Record<string, unknown>> | undefined;
    let args: Record<string, unknown> = {};
    if (declaration) {
      this.declarations++;
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
    const measure = add(
      { cost: workOf(declaration, args), boundedCost: 0, signals: own.signals, cohortAttributions: own.cohortAttributions },
      { ...below, cost: below.cost + (composite ? 1 : 0) },
      items,
    );
    return declaration?.bounded ? { ...measure, cost: 0, boundedCost: measure.cost + measure.boundedCost } : measure;
  }

  private conditionType(name: string | undefined): GraphQLCompositeType | undefined {
    const type = name === undefined ? undefined : this.schema.getType(name);
    return type && isCompositeType(type) ? type : undefined;
  }
}

function workOf(declaration: FieldCost<Record<string, unknown>> | undefined, args: Record<string, unknown>): number {
  const work = declaration?.work;
  return typeof work === 'function' ? (size(work(args)) ?? 0) : (work ?? 0);
}

function size(value: number | undefined): number | undefined {
  return value === undefined || !Number.isFinite(value) ? undefined : Math.max(0, value);
}

function add(base: Measure, part: Measure, times: number): Measure {
  return {
    cost: base.cost + times * part.cost,
    boundedCost: base.boundedCost + times * part.boundedCost,
    signals: base.signals + times * part.signals,
    cohortAttributions: base.cohortAttributions + times * part.cohortAttributions,
  };
}
