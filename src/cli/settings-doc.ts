import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { renderSettingsTable } from '../config/settings-table.js';
import { projectRoot } from '../util/project-root.js';

/** `npm run settings:doc` writes docs/settings.md; `npm run settings:check` fails when it is stale. */
const file = path.join(projectRoot(), 'docs/settings.md');
const rendered = renderSettingsTable();

if (process.argv.includes('--check')) {
  const current = await readFile(file, 'utf8').catch(() => '');
  if (current !== rendered) {
    console.error('docs/settings.md is out of date: run `npm run settings:doc`');
    process.exit(1);
  }
  console.log('docs/settings.md is up to date');
} else {
  await writeFile(file, rendered);
  console.log('wrote docs/settings.md');
}
