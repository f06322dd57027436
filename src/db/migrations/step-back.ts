import { migrations } from './index.js';
import { KNOWN_MIGRATIONS, SchemaVersionError, type SchemaState } from './schema-version.js';

/**
 * `migrate --to TARGET` undoes the applied migrations after TARGET, and only when each is `expand`:
 * the build before them then runs on the schema both before and after, so the step back can happen
 * under it. Across a `contract` migration the way back is a restore (docs/operations.md).
 */
export function refuseStepBack(state: SchemaState, target: string): void {
  if (!KNOWN_MIGRATIONS.includes(target)) {
    throw new SchemaVersionError(
      `cannot step back to ${target}: this build has no such migration (it knows ${KNOWN_MIGRATIONS[0]} … ${KNOWN_MIGRATIONS.at(-1)})`,
    );
  }
  if (state.unknown.length > 0) {
    throw new SchemaVersionError(
      `cannot step back with this build: the database has ${state.unknown.join(', ')}, which it does not know; run --to with the build that applied them`,
    );
  }
  if (!state.applied.includes(target)) {
    throw new SchemaVersionError(`cannot step back to ${target}: it is not applied (the database is at ${state.applied.at(-1) ?? 'none'})`);
  }
  const later = state.applied.filter((name) => name > target);
  const contract = later.filter((name) => migrations[name]?.compatibility === 'contract').at(-1);
  if (contract !== undefined) {
    throw new SchemaVersionError(
      `cannot step back to ${target}: ${contract} is a contract migration (the builds before it cannot run on the schema after it); restore a backup taken before it instead`,
    );
  }
}
