import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { renderSettingsTable } from '../config/settings-table.js';
import { projectRoot } from '../util/project-root.js';
import { answerStandardOptions } from './command-line.js';

answerStandardOptions(
  `usage: npm run settings:doc | npm run settings:check (node dist/src/cli/settings-doc.js [--check])\n\nWrites docs/settings.md from src/config/; --check fails (exit 1) when the committed file is stale.`,
);

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
