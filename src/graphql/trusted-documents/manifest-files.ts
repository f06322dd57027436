import { readFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalDocumentId } from './requested-id.js';

/** One persisted document: its id (canonical: a sha256 without its `sha256:` prefix), and its text. */
export interface PersistedDocument {
  id: string;
  body: string;
}

/**
 * The documents of a manifest file, in either format teams' tools write:
 * - Apollo's (`@apollo/generate-persisted-query-manifest`, and this project's trusted-documents.json):
 *   `{ "format": "apollo-persisted-query-manifest", "version": 1, "operations": [{ "id", "body", … }] }`;
 * - a plain map `{ "<id>": "<document>" }` (GraphQL Code Generator's client preset, Relay's
 *   `persistedQueries` output, graphql-yoga's examples).
 */
export function documentsOf(json: unknown, file: string): PersistedDocument[] {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${file}: expected a JSON object`);
  const record = json as Record<string, unknown>;
  if (record.format === 'apollo-persisted-query-manifest') {
    if (record.version !== 1 || !Array.isArray(record.operations))
      throw new Error(`${file}: an Apollo manifest needs version 1 and operations`);
    return record.operations.map((operation: unknown, i) => {
      const { id, body } = (operation ?? {}) as { id?: unknown; body?: unknown };
      if (typeof id !== 'string' || id === '' || typeof body !== 'string')
        throw new Error(`${file}: operations[${i}] needs an id and a body`);
      return { id: canonicalDocumentId(id), body };
    });
  }
  return Object.entries(record).map(([id, body]) => {
    if (typeof body !== 'string' || id === '') throw new Error(`${file}: "${id}" must map to a document string`);
    return { id: canonicalDocumentId(id), body };
  });
}

/** The documents of each file, relative paths taken from `root`. Fails loudly: a bad file must stop the start. */
export function readManifestFiles(root: string, files: readonly string[]): PersistedDocument[] {
  return files.flatMap((file) => {
    const absolute = path.resolve(root, file);
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(absolute, 'utf8'));
    } catch (error) {
      throw new Error(`cannot read trusted documents from ${absolute}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return documentsOf(json, absolute);
  });
}
