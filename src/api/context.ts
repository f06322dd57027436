import type { Logger } from 'pino';
import type { Viewer } from '../auth/authenticate.js';
import type { ReceiptSigner } from '../auth/receipt-signer.js';
import type { BucketState, FairShare } from '../budgets/fair-share.js';
import type { BudgetClass } from '../budgets/principal.js';
import type { MembershipChangeFeed } from '../membership/change-feed.js';
import type { UserExports } from '../export/user-export.js';
import type { Webhooks } from '../webhooks/webhooks.js';
import type { MembershipSync } from '../membership/cache/membership-sync.js';
import type { Memberships } from '../membership/memberships.js';
import type { MembershipStatusFeed } from '../membership/status-feed.js';
import type { Metrics } from '../observability/metrics.js';
import type { PurgeJobs } from '../purge/purge-jobs.js';
import type { SignalBatcher } from '../signals/signal-batcher.js';
import type { SignalReads } from '../signals/signal-reads.js';
import type { PerItemCoercion } from './per-item-coercion.js';

/**
 * What resolvers may use; built once per app by the composition root. Each capability is reached
 * through its objects here, never through its store (`npm run layers` forbids src/api/ to import one).
 */
export interface Services {
  /** Leaving, rejoining and reading a user's standing (src/membership). */
  membership: Memberships;
  /** This instance's copy of who has left, kept in step through the listener. */
  membershipCache: MembershipSync;
  signals: SignalBatcher;
  signalReads: SignalReads;
  statusFeed: MembershipStatusFeed;
  purges: PurgeJobs;
  changeFeed: MembershipChangeFeed;
  receipts: ReceiptSigner;
  webhooks: Webhooks;
  metrics: Metrics;
  logger: Logger;
  /** Budgets per caller, shared by every instance (src/budgets). */
  fairShare: FairShare;
  /** A user's data to take away (src/export; served at GET /export). */
  exports: UserExports;
}

export interface GraphQLContext extends PerItemCoercion {
  services: Services;
  /** Aborts when the client disconnects (the HTTP request's signal). */
  signal: AbortSignal;
  requestId: string;
  /** The verified caller, or null (then `authProblem` says why). */
  viewer: Viewer | null;
  authProblem: string | null;
  /** When the caller's token expires (ms since the epoch; null: never). Subscriptions end then. */
  tokenExpiresAt: number | null;
  /** Users of a bulk rejoin whose own rejoin limit is spent (src/server/bulk-rejoin-limits.ts); absent while fair share is off. */
  limitedRejoins?: ReadonlySet<string>;
  /** What this operation spent of its caller's budget; absent while fair share is off. */
  rateLimit?: RateLimitNote;
}

export interface RateLimitNote {
  principalClass: BudgetClass;
  cost: number;
  admitted: boolean;
  /** The caller's bucket after this operation. */
  state: BucketState;
}
