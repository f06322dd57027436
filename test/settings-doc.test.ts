import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { declaredSettings } from '../src/config/declared.js';
import { configuration } from '../src/config/schema.js';
import { renderSettingsTable } from '../src/config/settings-table.js';

it('docs/settings.md is the table the settings declare (run `npm run settings:doc` after changing one)', async () => {
  const committed = await readFile(new URL('../docs/settings.md', import.meta.url), 'utf8');
  expect(committed).toBe(renderSettingsTable());
});

it('reads each environment variable for one setting only', () => {
  const variables = declaredSettings(configuration).map((setting) => setting.env);
  expect(variables.filter((variable, index) => variables.indexOf(variable) !== index)).toEqual([]);
});
