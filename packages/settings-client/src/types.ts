import type { SettingsClientError } from './errors.js';
import type {
  SettingsLeaveEpisodeFragment,
  SettingsLeaveWithReasonMutationVariables,
  SettingsMembershipFragment,
  SettingsOlderLeavesQuery,
  SettingsPurgeReceiptFragment,
} from './operation-types.js';

/**
 * The shapes of operations.graphql's fragments, generated from the schema (operation-types.ts); 64-bit
 * values are decimal strings (exact at any size).
 */

/** One leave: its boundary in nanoseconds since the epoch, and how many of the user's signals it kept out of shared recommendations. */
export type LeaveEpisode = SettingsLeaveEpisodeFragment;

/** A user's standing: `leftAtNs` is the current leave's boundary (null while ACTIVE); `history` the newest page of leaves, oldest first. */
export type Membership = SettingsMembershipFragment;

/** One page of older leaves (`olderLeaves`). */
export type LeavePage = SettingsOlderLeavesQuery['communityLayerStatus'];

/** A purge: the leave boundary it removes contributions before, and how many registered downstream systems report it done, or a problem. */
export type PurgeReceipt = SettingsPurgeReceiptFragment;

/** Why a leave or rejoin happens, and under which policy version (docs/api.md, "Reasons"); all optional. */
export type Consent = SettingsLeaveWithReasonMutationVariables;

export interface SettingsClientOptions {
  /** The GraphQL endpoint, e.g. https://community.example.com/graphql or /graphql. */
  url: string;
  /** The signed-in user's bearer token; a function is asked again for every request and reconnect. */
  token: string | (() => string | Promise<string>);
  /** Longest wait for a query's or mutation's answer; then it fails with code NETWORK (retryable). Default 10,000 ms. Live streams have none. */
  requestTimeoutMs?: number;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** The wait before reconnecting a live stream: full jitter, doubling from `initial` up to `max` (ms). */
  reconnectMs?: { initial: number; max: number };
}

/** Where a live stream stands: `live` once the server has accepted it, `stopped` after a fatal error or `close`. */
export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'stopped';

export interface LiveHandlers<T> {
  next(value: T): void;
  /** Every failure: `retryable` ones are followed by a reconnect, the others stop the stream. */
  error?(error: SettingsClientError): void;
  state?(state: LiveState): void;
  /** The server ended the stream for good (purge progress, once FINISHED). */
  complete?(): void;
}
