/** Who put a document in the shared registry; decides in which mode it is trusted. */
export type RegisteredBy = 'operator' | 'apq';

export type Registration = 'stored' | 'exists' | 'conflict' | 'full';

/**
 * Documents registered at run time and shared by every instance (PostgreSQL: src/db/persisted-documents.ts).
 * Entries never change once stored (an id names one body), so instances may cache what they found.
 */
export interface DocumentRegistry {
  find(id: string): Promise<{ body: string; registeredBy: RegisteredBy } | null>;
  /**
   * `exists`: already there with this body (an operator registering an APQ entry promotes it);
   * `conflict`: the id names another body; `full`: APQ's share of the registry is at its cap.
   */
  register(id: string, body: string, by: RegisteredBy): Promise<Registration>;
}
