import { getOperationAST, Kind, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../api/context.js';
import { mutationAdmission } from '../graphql/field-admission.js';

/**
 * GLOBAL_PRIVACY_CONTROL_LEAVES: a request that carries `Sec-GPC: 1` with a user's own token (one
 * with a user id) is a leave of that user with reason GLOBAL_PRIVACY_CONTROL, made before its
 * operation runs, so the operation already sees them LEFT (Memberships.honorGlobalPrivacyControl
 * says when it leaves: ACTIVE and never left for GPC before). An operation that itself leaves or
 * rejoins is left to decide: its own reason is the one recorded. Service callers, having no user,
 * are never affected; a failed leave fails the request, which then does not run.
 */
export function useGlobalPrivacyControl(): Plugin {
  const honor = async ({ args }: { args: ExecutionArgs }) => {
    const context = args.contextValue as GraphQLContext & { request?: Request };
    const userId = context.viewer?.userId;
    if (!userId || context.request?.headers.get('sec-gpc') !== '1' || changesMembership(args)) return;
    await context.services.membership.honorGlobalPrivacyControl(userId);
  };
  return { onExecute: honor, onSubscribe: honor };
}

function changesMembership(args: ExecutionArgs): boolean {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== 'mutation') return false;
  return operation.selectionSet.selections.some((selection) => {
    const kind = selection.kind === Kind.FIELD ? mutationAdmission(args.schema, selection.name.value)?.kind : undefined;
    return kind === 'leave' || kind === 'rejoin';
  });
}
