import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Kind, parse, print, visit, type DefinitionNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';

/**
 * Trusted documents: the operations our own clients send, by hash. The manifest uses Apollo's
 * persisted-query manifest format, so other tools can read and produce it.
 */
export interface Manifest {
  format: 'apollo-persisted-query-manifest';
  version: 1;
  operations: ManifestOperation[];
}

export interface ManifestOperation {
  /** sha256 (hex) of `body`: what clients send as `extensions.persistedQuery.sha256Hash`. */
  id: string;
  name: string;
  type: 'query' | 'mutation' | 'subscription';
  body: string;
}

/** The clients whose operations are trusted, relative to the project root. */
export const OPERATION_SOURCES = [
  'packages/settings-client/src/operations.graphql',
  'examples/operations.graphql',
  'packages/sender/src/operations.graphql',
];

export const MANIFEST_FILE = 'trusted-documents.json';

/** The id of a document: sha256 of its printed form, as Apollo's persisted-query link computes it. */
export function documentId(body: string): string {
  return createHash('sha256').update(body).digest('hex');
}

/** One entry per named operation, with the fragments it uses, printed. */
export function operationsOf(source: string, file: string): ManifestOperation[] {
  const document = parse(source);
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  return document.definitions
    .filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
    .map((operation) => {
      if (!operation.name) throw new Error(`${file}: every trusted operation needs a name`);
      const definitions: DefinitionNode[] = [operation, ...usedFragments(operation, fragments)];
      const body = print({ kind: Kind.DOCUMENT, definitions });
      return { id: documentId(body), name: operation.name.value, type: operation.operation, body };
    });
}

function usedFragments(root: DefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>): FragmentDefinitionNode[] {
  const used = new Map<string, FragmentDefinitionNode>();
  const collect = (node: DefinitionNode) =>
    visit(node, {
      FragmentSpread: (spread) => {
        const fragment = fragments.get(spread.name.value);
        if (!fragment || used.has(fragment.name.value)) return;
        used.set(fragment.name.value, fragment);
        collect(fragment);
      },
    });
  collect(root);
  return [...used.values()];
}

/** The manifest of every operation source; operation names must be unique across them. */
export async function buildManifest(root: string): Promise<Manifest> {
  const operations: ManifestOperation[] = [];
  for (const file of OPERATION_SOURCES) {
    operations.push(...operationsOf(await readFile(path.join(root, file), 'utf8'), file));
  }
  const names = operations.map((operation) => operation.name);
  const repeated = names.filter((name, i) => names.indexOf(name) !== i);
  if (repeated.length > 0) throw new Error(`operation names must be unique across trusted clients: ${repeated.join(', ')}`);
  operations.sort((a, b) => a.name.localeCompare(b.name));
  return { format: 'apollo-persisted-query-manifest', version: 1, operations };
}

export function printManifest(manifest: Manifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
