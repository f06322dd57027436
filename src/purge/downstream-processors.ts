import type { Kysely } from 'kysely';
import type { Database, PurgeAcknowledgementState } from '../db/schema.js';
import {
  acknowledgePurge,
  listProcessors,
  processorStates,
  registerProcessor,
  retireProcessor,
  type DownstreamProcessor,
  type ProcessorState,
} from './acknowledgement.store.js';

export type { AcknowledgementChange, DownstreamProcessor, ProcessorState } from './acknowledgement.store.js';

/** The downstream processors as resolvers reach them: the registry, and what each reports of a purge. */
export class DownstreamProcessors {
  constructor(private readonly db: Kysely<Database>) {}

  /** A subject already registered: a DownstreamRefusal (PROCESSOR_EXISTS). */
  register(subject: string, name: string): Promise<DownstreamProcessor> {
    return registerProcessor(this.db, subject, name);
  }

  /** Undefined for an unknown id. */
  retire(id: string): Promise<DownstreamProcessor | undefined> {
    return retireProcessor(this.db, id);
  }

  /** Every processor, retired ones too. */
  list(): Promise<DownstreamProcessor[]> {
    return listProcessors(this.db);
  }

  /** Refused with a DownstreamRefusal (unknown processor or purge), writing nothing. */
  acknowledge(ack: { subject: string; purgeId: string; state: PurgeAcknowledgementState; reason: string | null }): Promise<ProcessorState> {
    return acknowledgePurge(this.db, ack);
  }

  /** Every processor the purge counts, PENDING until it acknowledges. */
  states(purgeId: string): Promise<ProcessorState[]> {
    return processorStates(this.db, purgeId);
  }
}
