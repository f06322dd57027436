import { ProxyTracerProvider } from '@opentelemetry/api';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Channel } from '../db/listen/channel-listener.js';
import type { Database } from '../db/schema.js';
import { MembershipSync } from '../membership/cache/membership-sync.js';
import { membershipSource } from '../membership/membership-snapshot.store.js';
import { Memberships } from '../membership/memberships.js';

/** A LISTEN session that never starts: a tool serves no signals, so it keeps no cache to follow. */
const NO_SESSION: Channel = { currentState: 'idle', reconnectCount: 0, subscribe: () => {} };

/**
 * The membership service as the API has it, for a tool: the same leaves and rejoins, without the
 * cache an instance waits on before it answers (its cache never listens, so that wait is none; the
 * servers' caches hear of every change from the database).
 */
export function offlineMemberships(db: Kysely<Database>, logger: Logger): Memberships {
  const cache = new MembershipSync({
    source: membershipSource(db),
    logger,
    tracer: new ProxyTracerProvider().getTracer('community-layer-cli'),
    resyncMs: 60_000,
    channel: NO_SESSION,
  });
  return new Memberships(db, cache, () => {});
}
