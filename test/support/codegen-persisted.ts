import { preset } from '@graphql-codegen/client-preset';
import { codegen } from '@graphql-codegen/core';
import { buildSchema, parse } from 'graphql';
import { readFile } from 'node:fs/promises';

/**
 * Runs GraphQL Code Generator's client preset with `persistedDocuments` on `source` against the
 * checked-in schema, and returns the `persisted-documents.json` it writes (`{ "sha256:<hex>": document }`).
 */
export async function codegenPersistedDocuments(source: string): Promise<Record<string, string>> {
  const schemaText = await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8');
  const sections = await preset.buildGeneratesSection({
    baseOutputDir: 'gql/',
    schema: parse(schemaText),
    schemaAst: buildSchema(schemaText),
    documents: [{ document: parse(source), location: 'team.graphql', rawSDL: source }],
    config: {},
    presetConfig: { persistedDocuments: true },
    pluginMap: {},
    plugins: [],
    documentTransforms: [],
  } as unknown as Parameters<typeof preset.buildGeneratesSection>[0]);
  // In the preset's order: the persisted documents are complete once the typed documents are generated.
  let persisted = '';
  for (const section of sections) {
    const output = await codegen(section);
    if (section.filename.endsWith('persisted-documents.json')) persisted = output;
  }
  return JSON.parse(persisted) as Record<string, string>;
}
