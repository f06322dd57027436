/** What a client asks for by id, in the shapes the major clients send. */
export type RequestedDocument =
  | { kind: 'none' }
  | { kind: 'id'; id: string /** sha256 of the query text (APQ): a query sent beside it may register it. */; hashed: boolean }
  | { kind: 'unsupported' };

export interface DocumentParams {
  query?: unknown;
  extensions?: unknown;
  /** Relay. */
  id?: unknown;
  doc_id?: unknown;
  /** GraphQL Code Generator's client preset with `persistedDocuments`. */
  documentId?: unknown;
}

const PREFIXED_SHA256 = /^sha256:([0-9a-fA-F]{64})$/;

/**
 * One form for every sha256 id: the bare lowercase hex. The GraphQL over HTTP persisted-documents
 * proposal (and codegen's client preset by default) writes `sha256:<hex>`, APQ clients the bare
 * hash; manifests, the registry and requests all meet in this form. Other ids (Relay's) stay as given.
 */
export function canonicalDocumentId(id: string): string {
  const hex = PREFIXED_SHA256.exec(id)?.[1];
  return hex === undefined ? id : hex.toLowerCase();
}

/** The request parameters that name a document by id besides `extensions.persistedQuery`. */
export const DOCUMENT_ID_PARAMS = ['id', 'doc_id', 'documentId'] as const;

/**
 * `extensions.persistedQuery.sha256Hash` (Apollo, urql, codegen), `id` or `doc_id` (Relay),
 * `documentId` (codegen's client preset), each with or without `sha256:`. A persistedQuery of
 * another version is `unsupported`.
 */
export function requestedDocument(params: DocumentParams): RequestedDocument {
  const persisted = (params.extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null | undefined)
    ?.persistedQuery;
  if (persisted != null) {
    if (persisted.version !== 1 || typeof persisted.sha256Hash !== 'string') return { kind: 'unsupported' };
    return { kind: 'id', id: canonicalDocumentId(persisted.sha256Hash), hashed: true };
  }
  for (const name of DOCUMENT_ID_PARAMS) {
    const id = params[name];
    if (typeof id === 'string' && id !== '') return { kind: 'id', id: canonicalDocumentId(id), hashed: false };
  }
  return { kind: 'none' };
}
