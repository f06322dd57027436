import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { projectRoot } from '../util/project-root.js';
import { buildManifest, MANIFEST_FILE, printManifest } from '../graphql/trusted-documents/manifest.js';

/** `npm run documents` writes trusted-documents.json (part of `npm run build`); `--check` fails when it is stale. */
const root = projectRoot();
const file = path.join(root, MANIFEST_FILE);
const printed = printManifest(await buildManifest(root));

if (process.argv.includes('--check')) {
  if ((await readFile(file, 'utf8').catch(() => '')) !== printed) {
    console.error(`${MANIFEST_FILE} is out of date: run \`npm run documents\``);
    process.exit(1);
  }
  console.log(`${MANIFEST_FILE} is up to date`);
} else {
  await writeFile(file, printed);
  console.log(`wrote ${MANIFEST_FILE}`);
}
