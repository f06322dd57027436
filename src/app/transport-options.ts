import type { Kysely } from 'kysely';
import { persistedDocuments } from '../db/persisted-documents.js';
import type { Database } from '../db/schema.js';
import { requestPipeline, type RequestPipelineOptions } from '../server/request-pipeline.js';
import type { TransportsOptions } from '../server/transports.js';

export interface TransportOptionsSources
  extends Omit<RequestPipelineOptions, 'documents'>,
    Pick<TransportsOptions, 'readiness' | 'readinessDetails'> {
  /** Where the persisted documents are registered. */
  db: Kysely<Database>;
}

/** What an instance's transports are built from: its request pipeline, the receipts' keys and its readiness. */
export function buildTransportOptions({ db, readiness, readinessDetails, ...pipeline }: TransportOptionsSources): TransportsOptions {
  const { config, services, authenticator, requestScope } = pipeline;
  const documents = persistedDocuments(db, config.graphql.apqMaxDocuments);
  return {
    config,
    services,
    authenticator,
    requestScope,
    pipeline: requestPipeline({ ...pipeline, documents }),
    receiptKeys: () => services.receipts.jwks(),
    readiness,
    readinessDetails,
  };
}
