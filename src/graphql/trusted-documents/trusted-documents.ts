import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GraphQLError } from 'graphql';
import { MANIFEST_FILE, operationsOf, type Manifest } from './manifest.js';

export type TrustedDocumentsMode = 'allow' | 'only';

/** Refusals, the same for every transport. `spec`: 400 for graphql-response+json, 200 for legacy JSON (as APQ clients expect). */
export const TRUSTED_DOCUMENT_ERRORS = {
  notFound: {
    message: 'PersistedQueryNotFound: no trusted document has this hash.',
    extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { spec: true, status: 400 } },
  },
  onlyTrusted: {
    message: 'This server runs trusted documents only: send extensions.persistedQuery.sha256Hash of a document in its manifest.',
    extensions: { code: 'PERSISTED_QUERY_ONLY', http: { spec: true, status: 400 } },
  },
  missing: {
    message: 'Send a GraphQL document as `query`, or the hash of a trusted one as extensions.persistedQuery.sha256Hash.',
    extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
  },
} as const;

/** The trusted documents of the manifest generated at build time (`npm run documents`). */
export class TrustedDocuments {
  private readonly bodies: ReadonlyMap<string, string>;

  constructor(
    manifest: Manifest,
    readonly mode: TrustedDocumentsMode,
  ) {
    this.bodies = new Map(manifest.operations.map((operation) => [operation.id, operation.body]));
  }

  static load(root: string, mode: TrustedDocumentsMode): TrustedDocuments {
    const file = path.join(root, MANIFEST_FILE);
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
    } catch (error) {
      throw new Error(`cannot read ${file} (run \`npm run documents\`): ${error instanceof Error ? error.message : String(error)}`);
    }
    return new TrustedDocuments(manifest, mode);
  }

  document(id: string): string | null {
    return this.bodies.get(id) ?? null;
  }

  /**
   * The document to run for transports outside Yoga's HTTP pipeline (graphql-ws, graphql-sse's
   * single-connection mode), under the same rules as the persisted-operations plugin on HTTP.
   */
  resolve(params: { query?: unknown; extensions?: unknown }): { query: string } | GraphQLError {
    const id = persistedQueryId(params.extensions);
    if (id !== null) {
      const body = this.document(id);
      return body === null ? refusal(TRUSTED_DOCUMENT_ERRORS.notFound) : { query: body };
    }
    if (this.mode === 'only') return refusal(TRUSTED_DOCUMENT_ERRORS.onlyTrusted);
    return typeof params.query === 'string' && params.query !== '' ? { query: params.query } : refusal(TRUSTED_DOCUMENT_ERRORS.missing);
  }
}

/** Operation name → id for the operations in one client's `.graphql` file. */
export function operationIds(root: string, file: string): Record<string, string> {
  return Object.fromEntries(operationsOf(readFileSync(path.join(root, file), 'utf8'), file).map((operation) => [operation.name, operation.id]));
}

/** `extensions.persistedQuery.sha256Hash` (version 1), as Apollo's and urql's persisted-query clients send it. */
function persistedQueryId(extensions: unknown): string | null {
  const persisted = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null | undefined)?.persistedQuery;
  return persisted?.version === 1 && typeof persisted.sha256Hash === 'string' ? persisted.sha256Hash : null;
}

function refusal(error: { message: string; extensions: Record<string, unknown> }): GraphQLError {
  return new GraphQLError(error.message, { extensions: error.extensions });
}
