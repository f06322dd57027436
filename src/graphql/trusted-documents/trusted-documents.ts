import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GraphQLError, Kind, parse } from 'graphql';
import { retryLater } from '../errors.js';
import { withApolloTypenames } from './apollo-typename.js';
import { documentId, MANIFEST_FILE } from './manifest.js';
import { documentsOf, readManifestFiles, type PersistedDocument } from './manifest-files.js';
import type { DocumentRegistry } from './registry.js';
import { canonicalDocumentId, requestedDocument, type DocumentParams } from './requested-id.js';

export type TrustedDocumentsMode = 'allow' | 'only';

/**
 * Refusals, the same for every transport. The messages are the exact strings Apollo Client, urql
 * and Relay's persisted-query support look for. `spec`: 400 for graphql-response+json, 200 for
 * legacy JSON.
 */
export const TRUSTED_DOCUMENT_ERRORS = {
  notFound: { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { spec: true, status: 400 } } },
  notSupported: {
    message: 'PersistedQueryNotSupported',
    extensions: { code: 'PERSISTED_QUERY_NOT_SUPPORTED', http: { spec: true, status: 400 } },
  },
  onlyTrusted: {
    message:
      'This server runs trusted documents only: send the id of a registered document (extensions.persistedQuery.sha256Hash, id or documentId).',
    extensions: { code: 'PERSISTED_QUERY_ONLY', http: { spec: true, status: 400 } },
  },
  hashMismatch: { message: 'provided sha does not match query', extensions: { code: 'BAD_REQUEST', http: { spec: true, status: 400 } } },
  missing: {
    message: 'Send a GraphQL document as `query`, or the id of a trusted one (extensions.persistedQuery.sha256Hash, id or documentId).',
    extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
  },
} as const;

/** Registry hits kept per instance: an id names one body forever, so a hit never goes stale. */
const FOUND_CACHE_SIZE = 5000;

export interface TrustedDocumentsOptions {
  mode: TrustedDocumentsMode;
  /** Documents from the build's manifest and the configured manifest files. */
  documents: readonly PersistedDocument[];
  /** The shared run-time registry (operator registrations; APQ in `allow` mode); none: files only. */
  registry?: DocumentRegistry;
  retryAfterSeconds?: number;
}

export type Resolution = { query: string } | GraphQLError;

/**
 * The one rule for persisted documents on every transport (HTTP through useTrustedDocuments,
 * WebSocket and single-connection SSE through prepareOperation). `only`: documents from the
 * manifests and those an operator registered; `allow`: those, any document sent as text, and
 * automatic persisted queries (a verified sha256 plus its query registers it for every instance).
 */
export class TrustedDocuments {
  readonly mode: TrustedDocumentsMode;
  /** The operation names of the documents from the manifests: the only ones metrics label by name. */
  readonly operationNames = new Set<string>();
  private readonly known = new Map<string, string>();
  private readonly found = new Map<string, string>();
  private readonly registry: DocumentRegistry | undefined;
  private readonly retryAfterSeconds: number;

  constructor(options: TrustedDocumentsOptions) {
    this.mode = options.mode;
    this.registry = options.registry;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
    for (const { id, body } of options.documents) {
      // Ids are canonical (manifest-files.ts), as requested ids are (requested-id.ts).
      this.known.set(canonicalDocumentId(id), body);
      for (const definition of parse(body).definitions) {
        if (definition.kind === Kind.OPERATION_DEFINITION && definition.name) this.operationNames.add(definition.name.value);
      }
      // The id Apollo Client computes for this document with its default cache.
      const apollo = withApolloTypenames(body);
      this.known.set(documentId(apollo), apollo);
    }
  }

  /** The build's manifest (`npm run documents`) plus the files named in config. */
  static load(root: string, files: readonly string[], options: Omit<TrustedDocumentsOptions, 'documents'>): TrustedDocuments {
    const file = path.join(root, MANIFEST_FILE);
    let built: PersistedDocument[];
    try {
      built = documentsOf(JSON.parse(readFileSync(file, 'utf8')), file);
    } catch (error) {
      throw new Error(`cannot read ${file} (run \`npm run documents\`): ${error instanceof Error ? error.message : String(error)}`);
    }
    return new TrustedDocuments({ ...options, documents: [...built, ...readManifestFiles(root, files)] });
  }

  /** The document with this id that this mode trusts, or null. */
  async document(requestedId: string): Promise<string | null> {
    const id = canonicalDocumentId(requestedId);
    const body = this.known.get(id) ?? this.found.get(id);
    if (body !== undefined || !this.registry) return body ?? null;
    const entry = await this.registry.find(id);
    if (!entry || (this.mode === 'only' && entry.registeredBy !== 'operator')) return null;
    if (entry.registeredBy === 'operator') this.remember(id, entry.body);
    return entry.body;
  }

  /** At once (no promise) when nothing must be looked up: a document sent as text, or one of the manifests'. */
  resolve(params: DocumentParams): Resolution | Promise<Resolution> {
    const requested = requestedDocument(params);
    const query = typeof params.query === 'string' && params.query !== '' ? params.query : null;
    if (requested.kind === 'unsupported') return refusal(TRUSTED_DOCUMENT_ERRORS.notSupported);
    if (requested.kind === 'none') {
      if (this.mode === 'only') return refusal(TRUSTED_DOCUMENT_ERRORS.onlyTrusted);
      return query !== null ? { query } : refusal(TRUSTED_DOCUMENT_ERRORS.missing);
    }
    const body = this.known.get(requested.id) ?? this.found.get(requested.id);
    if (body !== undefined) return { query: body };
    return this.resolveStored(requested.id, requested.hashed, query);
  }

  private async resolveStored(id: string, hashed: boolean, query: string | null): Promise<Resolution> {
    let body: string | null;
    try {
      body = await this.document(id);
    } catch {
      return retryLater('SERVICE_UNAVAILABLE', 'Persisted documents cannot be read right now; retry shortly.', {
        retryAfterSeconds: this.retryAfterSeconds,
      });
    }
    if (body !== null) return { query: body };
    if (query === null) return refusal(TRUSTED_DOCUMENT_ERRORS.notFound);
    if (this.mode === 'only') return refusal(TRUSTED_DOCUMENT_ERRORS.onlyTrusted);
    if (!hashed) return { query };
    if (sha256(query) !== id) return refusal(TRUSTED_DOCUMENT_ERRORS.hashMismatch);
    await this.registerAutomatic(id, query);
    return { query };
  }

  /** Best effort: a query that cannot be registered still runs; the next hash-only request misses and resends it. */
  private async registerAutomatic(id: string, query: string): Promise<void> {
    try {
      await this.registry?.register(id, query, 'apq');
    } catch {
      // Nothing to do: the document runs from its text this time.
    }
  }

  private remember(id: string, body: string): void {
    if (this.found.size >= FOUND_CACHE_SIZE) this.found.delete(this.found.keys().next().value!);
    this.found.set(id, body);
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function refusal(error: { message: string; extensions: Record<string, unknown> }): GraphQLError {
  return new GraphQLError(error.message, { extensions: error.extensions });
}
