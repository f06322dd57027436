/**
 * The client packages' operation types (`packages/<name>/src/operation-types.ts`), generated with
 * GraphQL Code Generator from schema.graphql and the package's operations as trusted-documents.json
 * holds them (the texts the server trusts): `npm run operation-types` writes them,
 * `npm run operation-types:check` fails when one is stale. After editing a package's
 * operations.graphql, run `npm run documents` first (the manifest), then this.
 *
 * Through @graphql-codegen/core with examples/codegen.ts's settings: the custom scalars stay strings
 * (exact past 2^53), and `strictScalars` fails generation on a scalar the map does not cover.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codegen } from '@graphql-codegen/core';
import * as typescriptOperations from '@graphql-codegen/typescript-operations';
import { buildSchema, Kind, parse, type DefinitionNode } from 'graphql';
import { MANIFEST_FILE, operationsOf, type Manifest } from '../src/graphql/trusted-documents/manifest.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = ['packages/sender', 'packages/settings-client'];
const CONFIG = {
  strictScalars: true,
  scalars: { UInt64: 'string', DateTime: 'string', Decimal: 'string' },
  enumsAsTypes: true,
  useTypeImports: true,
  // The shapes as the packages hand them out: no __typename asked for, a null field present as null.
  skipTypename: true,
  avoidOptionals: { field: true, inputValue: false },
};

/** One package's module: the types of the operations it sends, named after them. */
async function operationTypes(pkg: string, schemaText: string, manifest: Manifest): Promise<[file: string, text: string]> {
  const source = `${pkg}/src/operations.graphql`;
  const names = new Set(operationsOf(await readFile(path.join(root, source), 'utf8'), source).map((operation) => operation.name));
  const trusted = manifest.operations.filter((operation) => names.has(operation.name));
  const missing = [...names].filter((name) => !trusted.some((operation) => operation.name === name));
  if (missing.length > 0) throw new Error(`${source}: ${missing.join(', ')} not in ${MANIFEST_FILE}: run \`npm run documents\` first`);
  // Each manifest entry carries the fragments it uses: keep one definition of each.
  const definitions = new Map<string, DefinitionNode>();
  for (const operation of trusted) {
    for (const definition of parse(operation.body).definitions) {
      const name = 'name' in definition && definition.name ? definition.name.value : '';
      definitions.set(`${definition.kind}:${name}`, definition);
    }
  }
  const file = `${pkg}/src/operation-types.ts`;
  const output = await codegen({
    filename: file,
    schema: parse(schemaText),
    schemaAst: buildSchema(schemaText),
    documents: [{ location: MANIFEST_FILE, document: { kind: Kind.DOCUMENT, definitions: [...definitions.values()] } }],
    config: CONFIG,
    plugins: [{ typescriptOperations: {} }],
    pluginMap: { typescriptOperations },
  });
  const header = `// Written by \`npm run operation-types\` from schema.graphql and ${MANIFEST_FILE} (\`npm run operation-types:check\` verifies it): edit operations.graphql, not this one.\n\n`;
  return [file, header + output];
}

const schemaText = await readFile(path.join(root, 'schema.graphql'), 'utf8');
const manifest = JSON.parse(await readFile(path.join(root, MANIFEST_FILE), 'utf8')) as Manifest;
const outputs = await Promise.all(PACKAGES.map((pkg) => operationTypes(pkg, schemaText, manifest)));
const current = async (file: string) => readFile(path.join(root, file), 'utf8').catch(() => '');

if (process.argv.includes('--check')) {
  const stale: string[] = [];
  for (const [file, text] of outputs) if ((await current(file)) !== text) stale.push(file);
  if (stale.length > 0) {
    console.error(`${stale.join(', ')} out of date: run \`npm run operation-types\``);
    process.exit(1);
  }
  console.log(`${outputs.map(([file]) => file).join(', ')} up to date`);
} else {
  const written: string[] = [];
  for (const [file, text] of outputs) {
    if ((await current(file)) === text) continue;
    await writeFile(path.join(root, file), text);
    written.push(file);
  }
  console.log(written.length > 0 ? `wrote ${written.join(', ')}` : `${outputs.map(([file]) => file).join(', ')} up to date`);
}
