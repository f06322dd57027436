import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printSortedSchema } from '../src/api/schema.js';
import { breakingChanges, RELEASED_SCHEMA_FILE, releasedSchema } from '../src/cli/schema-breaking-changes.js';

const released = releasedSchema(readFileSync(RELEASED_SCHEMA_FILE, 'utf8'));
const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
/** The last release's schema with one more field on a type, as if the code had since removed it. */
const withField = (field: string) => ({
  ...released,
  sdl: released.sdl.replace('type AggregateMismatch {', `type AggregateMismatch {\n  ${field}`),
});

describe('the breaking-change check against the last release', () => {
  it('finds none between the release and the code now', async () => {
    expect(await breakingChanges(released, { version, sdl: printSortedSchema() })).toMatchObject({ breaks: [] });
  });

  it('reports a removed field as an unmarked break', async () => {
    const { breaks, allowedBy } = await breakingChanges(withField('planted: String'), { version: released.version, sdl: released.sdl });
    expect(breaks).toEqual(["AggregateMismatch.planted: Field 'planted' was removed from object type 'AggregateMismatch'"]);
    expect(allowedBy).toBeNull();
  });

  it('lets a field go that the release had deprecated, and any break with a breaking version bump', async () => {
    expect(await breakingChanges(withField('planted: String @deprecated(reason: "use x")'), released)).toMatchObject({ breaks: [] });
    expect(
      await breakingChanges({ ...withField('planted: String'), version: '0.1.0' }, { version: '0.2.0', sdl: released.sdl }),
    ).toMatchObject({ allowedBy: 'the version 0.1.0 → 0.2.0' });
    expect(
      await breakingChanges({ ...withField('planted: String'), version: '1.4.0' }, { version: '1.5.0', sdl: released.sdl }),
    ).toMatchObject({ allowedBy: null });
  });
});
