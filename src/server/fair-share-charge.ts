import { getOperationAST, Kind, type ExecutionArgs, type SelectionSetNode } from 'graphql';
import { mutationAdmission } from '../graphql/field-admission.js';
import { measureOperation, type CostMemo } from '../graphql/limits/cost-model.js';
import { measuredOperation } from '../graphql/limits/operation-limits.js';

/**
 * What an operation spends of its caller's budget: its cost (objects it can return, and the work
 * of bounded fields such as a bulk leave: 10 per user), or the
 * signals it writes when more (so a batch of n signals costs at least n, however it is split into
 * aliases or lists), and at least 1. The operation limits measured it already; the memo is for
 * when they were replaced (the bench).
 */
export function operationCharge(args: ExecutionArgs, memo: CostMemo): number {
  const measure =
    measuredOperation(args.contextValue as object) ??
    measureOperation(args.schema, args.document, args.operationName, args.variableValues as Record<string, unknown> | undefined, memo);
  return measure ? Math.max(1, measure.cost + measure.boundedCost, measure.signals) : 1;
}

/** What an operation asks of memberships: the users it rejoins, and whether it only leaves. */
export interface MembershipChanges {
  /** Once per rejoin it asks for (aliases count): its declared user argument when given (a literal or a variable), else the caller. */
  rejoins: string[];
  /** A mutation whose every field is a leave (`__typename` aside): never refused by a budget or limit. */
  leavesOnly: boolean;
  /** The users of each bulk rejoin, as given (a literal list or a variable): each refused in place past their limit. */
  bulkRejoins: unknown[][];
}

const NO_CHANGES: MembershipChanges = { rejoins: [], leavesOnly: false, bulkRejoins: [] };

/** The operation's leaves and rejoins (as its fields declare them: `extensions.admission`), through fragments. Nothing for anything but a mutation. */
export function membershipChanges(
  args: Pick<ExecutionArgs, 'schema' | 'document' | 'operationName' | 'variableValues'>,
  caller: string | null,
): MembershipChanges {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== 'mutation') return NO_CHANGES;
  const rejoins: string[] = [];
  const bulkRejoins: unknown[][] = [];
  let leaves = 0;
  let others = 0;
  const variables = (args.variableValues ?? {}) as Record<string, unknown>;
  const visit = (selectionSet: SelectionSetNode, depth: number) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const admission = mutationAdmission(args.schema, name);
        if (admission?.kind === 'leave') leaves++;
        else if (admission?.kind === 'rejoin') {
          const argument = selection.arguments?.find((node) => node.name.value === admission.userArgument)?.value;
          const given =
            argument?.kind === Kind.STRING ? argument.value : argument?.kind === Kind.VARIABLE ? variables[argument.name.value] : undefined;
          const target = typeof given === 'string' || typeof given === 'number' ? String(given) : caller;
          if (target !== null) rejoins.push(target);
          others++;
        } else if (admission?.kind === 'rejoinMany') {
          const argument = selection.arguments?.find((node) => node.name.value === admission.usersArgument)?.value;
          const given =
            argument?.kind === Kind.LIST
              ? argument.values.map((value) => (value.kind === Kind.STRING || value.kind === Kind.INT ? value.value : null))
              : argument?.kind === Kind.VARIABLE
                ? variables[argument.name.value]
                : undefined;
          if (Array.isArray(given)) bulkRejoins.push(given);
          others++;
        } else if (name !== '__typename') others++;
      } else if (depth < 8) {
        const fragment =
          selection.kind === Kind.INLINE_FRAGMENT
            ? selection
            : args.document.definitions.find((node) => node.kind === Kind.FRAGMENT_DEFINITION && node.name.value === selection.name.value);
        if (fragment && 'selectionSet' in fragment) visit(fragment.selectionSet, depth + 1);
        else others++;
      } else others++;
    }
  };
  visit(operation.selectionSet, 0);
  return { rejoins, leavesOnly: leaves > 0 && others === 0, bulkRejoins };
}
