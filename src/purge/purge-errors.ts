import { GraphQLError } from 'graphql';
import { NOT_LEFT_SQLSTATE, PURGE_RUNNING_SQLSTATE } from './purge.store.js';

/** Refusals the purge SQL states (its SQLSTATEs), as GraphQL errors; null for anything else. */
export function purgeRefusal(error: unknown): GraphQLError | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === NOT_LEFT_SQLSTATE) {
    return new GraphQLError('Purging is only possible while LEFT: leave the community layer first.', { extensions: { code: 'NOT_LEFT' } });
  }
  if (code === PURGE_RUNNING_SQLSTATE) {
    return new GraphQLError('A purge of your contributions is running: rejoin when it has finished (see communityPurges).', {
      extensions: { code: 'PURGE_IN_PROGRESS' },
    });
  }
  return null;
}
