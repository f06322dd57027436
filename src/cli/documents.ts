import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { projectRoot } from '../util/project-root.js';
import { BUILT_IN_IDS, printBuiltInIds } from '../graphql/trusted-documents/built-in-ids.js';
import { buildManifest, MANIFEST_FILE, printManifest } from '../graphql/trusted-documents/manifest.js';
import { answerStandardOptions } from './command-line.js';

answerStandardOptions(
  `usage: npm run documents | npm run documents:check (node dist/src/cli/documents.js [--check])\n\nWrites trusted-documents.json and the clients' built-in ids; --check fails (exit 1) when one is stale.`,
);

/**
 * `npm run documents` writes trusted-documents.json and the ids built into our clients (part of
 * `npm run build`); `--check` fails when any of them is stale.
 */
const root = projectRoot();
const outputs: [file: string, text: string][] = [[MANIFEST_FILE, printManifest(await buildManifest(root))]];
for (const { source, target } of BUILT_IN_IDS) outputs.push([target, await printBuiltInIds(root, source)]);

if (process.argv.includes('--check')) {
  const stale: string[] = [];
  for (const [file, text] of outputs) if ((await readFile(path.join(root, file), 'utf8').catch(() => '')) !== text) stale.push(file);
  if (stale.length > 0) {
    console.error(`${stale.join(', ')} out of date: run \`npm run documents\``);
    process.exit(1);
  }
  console.log(`${outputs.map(([file]) => file).join(', ')} up to date`);
} else {
  // Only what changed: `npm run build` runs this while test files may be reading these files.
  const written: string[] = [];
  for (const [file, text] of outputs) {
    if ((await readFile(path.join(root, file), 'utf8').catch(() => '')) === text) continue;
    await writeFile(path.join(root, file), text);
    written.push(file);
  }
  console.log(written.length > 0 ? `wrote ${written.join(', ')}` : `${outputs.map(([file]) => file).join(', ')} up to date`);
}
