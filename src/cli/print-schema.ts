import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { printSortedSchema } from '../api/schema.js';
import { projectRoot } from '../util/project-root.js';
import { answerStandardOptions } from './command-line.js';

answerStandardOptions(
  `usage: npm run schema | npm run schema:check (node dist/src/cli/print-schema.js [--check])\n\nWrites schema.graphql from the code; --check fails (exit 1) when the committed file is stale.`,
);

/** `npm run schema` writes schema.graphql; `npm run schema:check` fails when it is stale. */
const file = path.join(projectRoot(), 'schema.graphql');
const printed = printSortedSchema();

if (process.argv.includes('--check')) {
  const current = await readFile(file, 'utf8').catch(() => '');
  if (current !== printed) {
    console.error('schema.graphql is out of date: run `npm run schema`');
    process.exit(1);
  }
  console.log('schema.graphql is up to date');
} else {
  await writeFile(file, printed);
  console.log('wrote schema.graphql');
}
