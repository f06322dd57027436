import { CriticalityLevel, diff, DiffRule } from '@graphql-inspector/core';
import { buildSchema } from 'graphql';

/** The last release's schema, committed (a tag would be missing in shallow clones and tarballs). */
export const RELEASED_SCHEMA_FILE = 'api/released-schema.graphql';

export interface VersionedSchema {
  version: string;
  sdl: string;
}

/** The committed file: a header naming the release's version, then its schema. */
export function releasedSchema(text: string): VersionedSchema {
  const version = /^# The schema of community-layer (\S+),/.exec(text)?.[1];
  if (!version) throw new Error(`${RELEASED_SCHEMA_FILE}: no "# The schema of community-layer <version>," header`);
  return { version, sdl: text };
}

/**
 * graphql-inspector's breaking changes from `released` to `current`, a removal of what the release
 * had deprecated left out (its suppressRemovalOfDeprecatedField rule). `allowedBy` names the version
 * bump that marks them, when it is a breaking one in semantic versioning (0.x: the minor).
 */
export async function breakingChanges(
  released: VersionedSchema,
  current: VersionedSchema,
): Promise<{ breaks: string[]; allowedBy: string | null }> {
  const changes = await diff(buildSchema(released.sdl), buildSchema(current.sdl), [DiffRule.suppressRemovalOfDeprecatedField]);
  const breaks = changes
    .filter((change) => change.criticality.level === CriticalityLevel.Breaking)
    .map((change) => `${change.path ?? ''}: ${change.message}`);
  return {
    breaks,
    allowedBy: breakingBump(released.version, current.version) ? `the version ${released.version} → ${current.version}` : null,
  };
}

function breakingBump(from: string, to: string): boolean {
  const [a, b] = [from, to].map((version) => version.split('.').map(Number)) as [number[], number[]];
  if (b[0]! !== a[0]!) return b[0]! > a[0]!;
  return a[0] === 0 && b[1]! > a[1]!;
}
