import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { operationsOf } from './manifest.js';

/**
 * Clients that carry their operations' ids built in (a browser cannot hash before its first request
 * everywhere: crypto.subtle needs a secure context): `npm run documents` writes each one's ids
 * from the same printing the manifest uses, so the two never disagree.
 */
export const BUILT_IN_IDS = [
  { source: 'packages/settings-client/src/operations.graphql', target: 'packages/settings-client/src/documents.ts' },
];

/** The TypeScript module of one client's ids: operation name → trusted-document id. */
export async function printBuiltInIds(root: string, source: string): Promise<string> {
  const operations = operationsOf(await readFile(path.join(root, source), 'utf8'), source);
  const entries = operations.map((operation) => `  ${operation.name}: '${operation.id}',`).join('\n');
  return `// Written by \`npm run documents\` from ${path.basename(source)} (\`npm run documents:check\` verifies it): edit that file, not this one.

/** Operation name → trusted-document id (sha256 of its printed text), as the server's manifest has it. */
export const DOCUMENT_IDS = {
${entries}
} as const;

export type OperationName = keyof typeof DOCUMENT_IDS;
`;
}
