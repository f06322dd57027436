import {
  coerceInputValue,
  getOperationAST,
  isListType,
  isNonNullType,
  Kind,
  typeFromAST,
  visit,
  type DocumentNode,
  type FieldNode,
  type GraphQLInputType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type ValueNode,
} from 'graphql';
import { coercesToItself, createCoercionMemo } from '../graphql/limits/coerced-variables.js';
import { fieldNamedIn } from './argument-paths.js';
import type { InvalidSignal } from './signal-validation.js';
import { badTextInValue } from './text-inputs.js';

/**
 * GraphQL coerces variables before anything resolves, and one item that fails (a date that does
 * not exist, a number out of range, an unknown enum value) refuses the whole call. A batch that
 * asked for `invalid: SKIP` (and `validateSignals`) wants each invalid signal as one item instead
 * (so does an item holding text that cannot be stored, which would refuse the call otherwise):
 * so its list variable is coerced item by item first, the items that fail are taken out (and the
 * rest executes, limits measured on it), and the resolver puts them back as InvalidSignals.
 */
export interface RefusedItems {
  /** Items in the variable as sent. */
  total: number;
  /** The original index of each item left in the variable. */
  kept: number[];
  refused: InvalidSignal[];
}

/** The context key the resolvers read (`refusedItemsOf`): variable name → its refused items. */
export interface PerItemCoercion {
  refusedItems?: ReadonlyMap<string, RefusedItems>;
}

const PER_ITEM_FIELDS = new Set(['sendSignals', 'validateSignals']);
const LIST_ARGUMENT = 'inputs';

/** The variables with refused items taken out, or null when no eligible variable has any. */
export function coerceItemByItem(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): { variables: Record<string, unknown>; refusedItems: Map<string, RefusedItems> } | null {
  const operation = getOperationAST(document, operationName);
  if (!variables || operation?.operation !== 'mutation') return null;
  const eligible = eligibleVariables(document, variables);
  if (eligible.size === 0) return null;
  const refusedItems = new Map<string, RefusedItems>();
  const pruned = { ...variables };
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const value = variables[name];
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    const list = type && isNonNullType(type) ? type.ofType : type;
    if (!eligible.has(name) || !Array.isArray(value) || !list || !isListType(list)) continue;
    const items: RefusedItems = { total: value.length, kept: [], refused: [] };
    const memo = createCoercionMemo();
    value.forEach((item: unknown, index) => {
      // Most items are already what coercion makes of them (checked without allocating): only the
      // others pay for a full coercion, which names the problem.
      const type = list.ofType as GraphQLInputType;
      // Text that cannot be stored as sent (text-inputs.ts) is one more problem of the item.
      const problem = (coercesToItself(item, type, memo) ? null : firstProblem(item, type)) ?? badTextInValue(item);
      if (problem === null) return void items.kept.push(index);
      const argument = `${LIST_ARGUMENT}[${index}]${problem.path}`;
      items.refused.push({
        index,
        argument,
        code: 'BAD_USER_INPUT',
        message: `Invalid value for argument "${argument}": ${problem.message}`,
      });
    });
    if (items.refused.length === 0) continue;
    pruned[name] = items.kept.map((index) => value[index]);
    refusedItems.set(name, items);
  }
  return refusedItems.size === 0 ? null : { variables: pruned, refusedItems };
}

/** What the resolver of `info`'s field lost to per-item coercion, if anything. */
export function refusedItemsOf(context: PerItemCoercion, info: GraphQLResolveInfo): RefusedItems | null {
  const argument = info.fieldNodes[0]?.arguments?.find((node) => node.name.value === LIST_ARGUMENT);
  if (!context.refusedItems || argument?.value.kind !== Kind.VARIABLE) return null;
  return context.refusedItems.get(argument.value.name.value) ?? null;
}

/** Variables used only as the `inputs` of fields that report invalid items one by one. */
function eligibleVariables(document: DocumentNode, variables: Record<string, unknown>): Set<string> {
  const perItem = new Set<string>();
  const elsewhere = new Set<string>();
  visit(document, {
    Field(field) {
      for (const argument of field.arguments ?? []) {
        const used = variablesIn(argument.value);
        const asList = argument.name.value === LIST_ARGUMENT && argument.value.kind === Kind.VARIABLE && reportsPerItem(field, variables);
        for (const name of used) (asList ? perItem : elsewhere).add(name);
      }
    },
    Directive(directive) {
      for (const argument of directive.arguments ?? []) for (const name of variablesIn(argument.value)) elsewhere.add(name);
    },
  });
  return new Set([...perItem].filter((name) => !elsewhere.has(name)));
}

function reportsPerItem(field: FieldNode, variables: Record<string, unknown>): boolean {
  if (!PER_ITEM_FIELDS.has(field.name.value)) return false;
  if (field.name.value === 'validateSignals') return true;
  const invalid = field.arguments?.find((argument) => argument.name.value === 'invalid')?.value;
  if (invalid?.kind === Kind.ENUM) return invalid.value === 'SKIP';
  return invalid?.kind === Kind.VARIABLE && variables[invalid.name.value] === 'SKIP';
}

function variablesIn(value: ValueNode): string[] {
  if (value.kind === Kind.VARIABLE) return [value.name.value];
  if (value.kind === Kind.LIST) return value.values.flatMap(variablesIn);
  if (value.kind === Kind.OBJECT) return value.fields.flatMap((field) => variablesIn(field.value));
  return [];
}

/** The first coercion problem of one item, with its path inside the item (`.occurredAt`), or null. */
function firstProblem(item: unknown, type: GraphQLInputType): { path: string; message: string } | null {
  let problem: { path: string; message: string } | null = null;
  coerceInputValue(item, type, (path, _value, error) => {
    if (problem) return;
    const field = fieldNamedIn(error.message);
    const written = path.map((step) => (typeof step === 'number' ? `[${step}]` : `.${step}`)).join('');
    problem = { path: `${written}${field ? `.${field}` : ''}`, message: error.message };
  });
  return problem;
}
