import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gql } from '@apollo/client';
import { addTypenameToDocument, print } from '@apollo/client/utilities';
import { expect } from 'vitest';
import { codegenPersistedDocuments } from './codegen-persisted.js';

/** A team's own persisted documents (test/clients-persisted.test.ts): each client's manifest, as its tooling writes it. */

/** A team's own operations: in no file of the server's source. */
export const TEAM_APQ = 'query TeamApq($itemId: ID!) { communityItemAggregate(itemId: $itemId) { itemId signalTotal } }';
export const TEAM_ITEM = 'query TeamItem($itemId: ID!) { communityItemAggregate(itemId: $itemId) { itemId signalTotal } }';
const TEAM_CODEGEN = 'query TeamCodegen($itemId: ID!) { communityItemAggregate(itemId: $itemId) { itemId weightTotal } }';
const TEAM_RELAY = 'query TeamRelay($itemId: ID!) { communityItemAggregate(itemId: $itemId) { signalTotal weightTotal } }';
export const RELAY_ID = 'd41d8cd98f00b204e9800998ecf8427e';

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Writes the Apollo and Code Generator manifests for the server to load, and registers Relay's
 * documents with the CLI: what GRAPHQL_TRUSTED_DOCUMENTS_FILES takes, and Code Generator's manifest.
 */
export async function registerTeamDocuments(
  databaseUrl: string,
): Promise<{ trustedDocumentsFiles: string; codegen: Record<string, string> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'team-documents-'));
  // What @apollo/generate-persisted-query-manifest writes: ids of the documents as Apollo sends them.
  const apolloBody = print(addTypenameToDocument(gql(TEAM_ITEM)));
  const apolloManifest = {
    format: 'apollo-persisted-query-manifest',
    version: 1,
    operations: [{ id: sha256(apolloBody), name: 'TeamItem', type: 'query', body: apolloBody }],
  };
  const codegen = await codegenPersistedDocuments(TEAM_CODEGEN);
  const files = { apollo: path.join(dir, 'apollo.json'), codegen: path.join(dir, 'codegen.json'), relay: path.join(dir, 'relay.json') };
  await writeFile(files.apollo, JSON.stringify(apolloManifest));
  await writeFile(files.codegen, JSON.stringify(codegen));
  await writeFile(files.relay, JSON.stringify({ [RELAY_ID]: TEAM_RELAY }));
  // An operator registers Relay's documents (its ids are not sha256 of the text) with the CLI.
  const cli = await promisify(execFile)('npx', ['tsx', 'src/cli/documents-register.ts', files.relay], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
  });
  expect(cli.stdout).toContain('registered 1');
  return { trustedDocumentsFiles: `${files.apollo},${files.codegen}`, codegen };
}
