import type { DeclaredMigration } from './compatibility.js';
import * as membership from './0001_membership.js';
import * as signals from './0002_signals.js';
import * as boundary from './0003_boundary.js';
import * as lockBuckets from './0004_lock_buckets.js';
import * as membershipGuard from './0005_membership_guard.js';
import * as signalEventIds from './0006_signal_event_ids.js';
import * as purge from './0007_purge.js';
import * as userKeys from './0008_user_keys.js';
import * as ingestLocks from './0009_ingest_locks.js';
import * as ledgerKeys from './0010_ledger_keys.js';
import * as purgeNotify from './0011_purge_notify.js';
import * as persistedDocuments from './0012_persisted_documents.js';
import * as membershipFeed from './0013_membership_feed.js';
import * as webhooks from './0014_webhooks.js';
import * as purgeWatermark from './0015_purge_watermark.js';
import * as purgeAcknowledgements from './0016_purge_acknowledgements.js';
import * as ingestFence from './0017_ingest_fence.js';
import * as webhookLanes from './0018_webhook_lanes.js';
import * as fairShare from './0019_fair_share.js';
import * as ingestPlainInsert from './0020_ingest_plain_insert.js';
import * as webhookProbation from './0021_webhook_probation.js';
import * as ingestOneStatement from './0022_ingest_one_statement.js';
import * as fixedSearchPath from './0023_fixed_search_path.js';
import * as consentReasons from './0024_consent_reasons.js';
import * as bulkMembership from './0025_bulk_membership.js';

/**
 * Listed explicitly (not read from the folder) so they load the same under tsc, tsx and vitest.
 * Each declares what it promises the builds before it (compatibility.ts): `expand`, additive, every
 * build back to the last `contract` runs on the schema after it; `contract`, they cannot. A build
 * starts on a newer schema only when every migration it does not know is `expand`, and `migrate
 * --to` steps back only across `expand` ones (docs/operations.md, "Rollouts and rollbacks").
 */
export const migrations: Record<string, DeclaredMigration> = {
  '0001_membership': membership,
  '0002_signals': signals,
  '0003_boundary': boundary,
  '0004_lock_buckets': lockBuckets,
  '0005_membership_guard': membershipGuard,
  '0006_signal_event_ids': signalEventIds,
  '0007_purge': purge,
  '0008_user_keys': userKeys,
  '0009_ingest_locks': ingestLocks,
  '0010_ledger_keys': ledgerKeys,
  '0011_purge_notify': purgeNotify,
  '0012_persisted_documents': persistedDocuments,
  '0013_membership_feed': membershipFeed,
  '0014_webhooks': webhooks,
  '0015_purge_watermark': purgeWatermark,
  '0016_purge_acknowledgements': purgeAcknowledgements,
  '0017_ingest_fence': ingestFence,
  '0018_webhook_lanes': webhookLanes,
  '0019_fair_share': fairShare,
  '0020_ingest_plain_insert': ingestPlainInsert,
  '0021_webhook_probation': webhookProbation,
  '0022_ingest_one_statement': ingestOneStatement,
  '0023_fixed_search_path': fixedSearchPath,
  '0024_consent_reasons': consentReasons,
  '0025_bulk_membership': bulkMembership,
};
