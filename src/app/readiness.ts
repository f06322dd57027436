import type { KeySource } from '../auth/key-source.js';
import type { DatabaseHandle } from '../db/database.js';
import type { DurabilityMonitor } from '../db/durability-monitor.js';
import { acceptsWrites } from '../db/writable.js';
import type { MembershipSync } from '../membership/cache/membership-sync.js';
import { buildInfo } from '../observability/build-info.js';
import type { TransportsOptions } from '../server/transports.js';

export interface ReadinessSources {
  database: DatabaseHandle;
  membershipCache: MembershipSync;
  keys: KeySource;
  durability: DurabilityMonitor;
}

/** What /readyz asks before saying ready, and the details it shows beside the answer. */
export function readiness({
  database,
  membershipCache,
  keys,
  durability,
}: ReadinessSources): Pick<TransportsOptions, 'readiness' | 'readinessDetails'> {
  return {
    readiness: [
      { name: 'database', check: () => acceptsWrites(database.db) },
      { name: 'membershipCache', check: async () => membershipCache.inSync },
      { name: 'authKeys', check: async () => keys.loaded },
      { name: 'durableCommits', check: async () => durability.acceptable },
    ],
    readinessDetails: () => ({ durability: durability.current, build: buildInfo() }),
  };
}
