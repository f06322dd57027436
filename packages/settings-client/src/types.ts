import type { SettingsClientError } from './errors.js';

/** The shapes of operations.graphql's fragments; 64-bit values are decimal strings (exact at any size). */

export interface LeaveEpisode {
  leftAtNs: string;
  rejoinedAtNs: string | null;
  /** How many of the user's signals were kept out of shared recommendations during this leave. */
  gatedSignalTotal: string;
}

export interface Membership {
  userId: string;
  status: 'ACTIVE' | 'LEFT';
  /** The boundary of the current leave in nanoseconds since the epoch; null while ACTIVE. */
  leftAtNs: string | null;
  leftAt: string | null;
  leaveCount: number;
  /** The newest page of leaves, oldest first. */
  history: LeaveEpisode[];
}

/** One page of older leaves (`olderLeaves`). */
export type LeavePage = Pick<Membership, 'leaveCount' | 'history'>;

export interface PurgeReceipt {
  purgeId: string;
  status: 'RUNNING' | 'FINISHED';
  /** The leave boundary it removes contributions before. */
  boundaryNs: string;
  finishedAt: string | null;
  removedSoFar: number;
  weightRemoved: number;
  foundNothing: boolean;
  targets: { target: string; entries: number; weight: number }[];
  /** The registered downstream systems: how many report the purge done, or a problem. */
  downstream: { total: number; done: number; failed: number };
}

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
