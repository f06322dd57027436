import { getOperationAST, Kind, type ExecutionArgs, type SelectionSetNode } from 'graphql';
import { measureOperation, type CostMemo } from '../graphql/limits/cost-model.js';
import { measuredOperation } from '../graphql/limits/operation-limits.js';

const MEMBERSHIP_CHANGES = new Set(['leaveCommunityLayer', 'rejoinCommunityLayer']);

/**
 * What an operation spends of its caller's budget: its cost (objects it can return), or the
 * signals it writes when more (so a batch of n signals costs at least n, however it is split into
 * aliases or lists), and at least 1. The operation limits measured it already; the memo is for
 * when they were replaced (the bench).
 */
export function operationCharge(args: ExecutionArgs, memo: CostMemo): number {
  const measure =
    measuredOperation(args.contextValue as object) ??
    measureOperation(args.schema, args.document, args.operationName, args.variableValues as Record<string, unknown> | undefined, memo);
  return measure ? Math.max(1, measure.cost, measure.signals) : 1;
}

/**
 * The users whose membership the operation changes, once per leave or rejoin it asks for (aliases
 * count): `userId` when given (a literal or a variable), else the caller. Empty for most operations.
 */
export function membershipTargets(args: ExecutionArgs, caller: string | null): string[] {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== 'mutation') return [];
  const targets: string[] = [];
  const variables = (args.variableValues ?? {}) as Record<string, unknown>;
  const visit = (selectionSet: SelectionSetNode, depth: number) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (!MEMBERSHIP_CHANGES.has(selection.name.value)) continue;
        const argument = selection.arguments?.find((node) => node.name.value === 'userId')?.value;
        const given = argument?.kind === Kind.STRING ? argument.value : argument?.kind === Kind.VARIABLE ? variables[argument.name.value] : undefined;
        const target = typeof given === 'string' || typeof given === 'number' ? String(given) : caller;
        if (target !== null) targets.push(target);
      } else if (depth < 8) {
        const fragment =
          selection.kind === Kind.INLINE_FRAGMENT
            ? selection
            : args.document.definitions.find((node) => node.kind === Kind.FRAGMENT_DEFINITION && node.name.value === selection.name.value);
        if (fragment && 'selectionSet' in fragment) visit(fragment.selectionSet, depth + 1);
      }
    }
  };
  visit(operation.selectionSet, 0);
  return targets;
}
