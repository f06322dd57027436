import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { printSortedSchema } from '../src/api/schema.js';

it('schema.graphql is the schema the code builds (run `npm run schema` after changing it)', async () => {
  const committed = await readFile(new URL('../schema.graphql', import.meta.url), 'utf8');
  expect(committed).toBe(printSortedSchema());
});
