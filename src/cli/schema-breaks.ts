import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { printSortedSchema } from '../api/schema.js';
import { projectRoot } from '../util/project-root.js';
import { answerStandardOptions } from './command-line.js';
import { breakingChanges, RELEASED_SCHEMA_FILE, releasedSchema } from './schema-breaking-changes.js';

const USAGE = `usage: npm run schema:breaks [-- --release]   (a development checkout: needs the development dependencies)

Compares the schema the code builds with the last release's (${RELEASED_SCHEMA_FILE}) and fails
(exit 1) on a breaking change that is not marked: marked means the removed field or value was
@deprecated in the last release, or package.json's version is a breaking bump over the release's
(the major, or the minor below 1.0.0). docs/versioning.md says how long a deprecated field stays.
  --release   record the schema and version as released (when tagging a release)`;

answerStandardOptions(USAGE);
const root = projectRoot();
const file = path.join(root, RELEASED_SCHEMA_FILE);
const { version } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string };
const current = printSortedSchema();

if (process.argv.includes('--release')) {
  await writeFile(
    file,
    `# The schema of community-layer ${version}, the last release: \`npm run schema:breaks\` compares with it.\n${current}`,
  );
  console.log(`wrote ${RELEASED_SCHEMA_FILE} (${version})`);
  process.exit(0);
}
const released = releasedSchema(await readFile(file, 'utf8'));
const { breaks, allowedBy } = await breakingChanges(released, { version, sdl: current });
if (breaks.length > 0 && !allowedBy) {
  console.error(
    [
      `schema.graphql breaks clients of ${released.version} (${RELEASED_SCHEMA_FILE}) without being marked:`,
      ...breaks.map((change) => `  ${change}`),
      'Deprecate first and remove in a later release, or make the version a breaking bump (docs/versioning.md).',
    ].join('\n'),
  );
  process.exit(1);
}
console.log(
  breaks.length > 0
    ? `${breaks.length} breaking change(s) since ${released.version}, allowed by ${allowedBy}`
    : `no unmarked breaking change since ${released.version}`,
);
