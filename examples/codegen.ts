/**
 * Typed client code for examples/operations.graphql, from the checked-in schema.graphql:
 * `npm run examples` (then typechecked with `tsc -p examples`).
 *
 * The custom scalars are strings on the wire and stay strings in TypeScript: UInt64 (ids, counts,
 * nanosecond times) and Decimal (exact sums) because a JS number would round them past 2^53,
 * DateTime because it is an RFC 3339 text. `strictScalars` makes generation fail if the server ever
 * adds a scalar this map does not cover.
 *
 * With @graphql-codegen/cli the same settings go in a `CodegenConfig`; this runs the generator
 * through @graphql-codegen/core instead, whose dependencies install on Node.js 20 (the CLI's
 * current ones declare Node.js 22).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codegen } from '@graphql-codegen/core';
import * as typedDocumentNode from '@graphql-codegen/typed-document-node';
import * as typescriptOperations from '@graphql-codegen/typescript-operations';
import { buildSchema, parse } from 'graphql';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

export const config = {
  schema: 'schema.graphql',
  documents: 'examples/operations.graphql',
  output: 'examples/generated/graphql.ts',
  pluginConfig: {
    strictScalars: true,
    scalars: { UInt64: 'string', DateTime: 'string', Decimal: 'string' },
    enumsAsTypes: true,
    useTypeImports: true,
  },
};

export async function generate(): Promise<string> {
  const schemaText = await readFile(path.join(root, config.schema), 'utf8');
  const output = await codegen({
    filename: config.output,
    schema: parse(schemaText),
    schemaAst: buildSchema(schemaText),
    documents: [{ location: config.documents, document: parse(await readFile(path.join(root, config.documents), 'utf8')) }],
    config: config.pluginConfig,
    // typescript-operations emits the scalars, enums and inputs the operations use.
    plugins: [{ typescriptOperations: {} }, { typedDocumentNode: {} }],
    pluginMap: { typescriptOperations, typedDocumentNode },
  });
  const file = path.join(root, config.output);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, output);
  return file;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`wrote ${path.relative(root, await generate())}`);
}
