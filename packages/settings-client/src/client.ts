import type { OperationName } from './documents.js';
import { follow } from './live.js';
import { postOperation } from './request.js';
import type { Consent, LeavePage, LiveHandlers, Membership, PurgeReceipt, SettingsClientOptions } from './types.js';

const DEFAULT_RECONNECT_MS = { initial: 500, max: 15_000 };
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/**
 * The signed-in user's community-layer settings. Every call sends a trusted document's id, never
 * its text, so it works with GRAPHQL_TRUSTED_DOCUMENTS=only; failures are SettingsClientErrors.
 */
export class SettingsClient {
  private readonly fetcher: typeof fetch;
  private readonly token: () => Promise<string>;

  constructor(private readonly options: SettingsClientOptions) {
    // Called unbound: a browser's fetch refuses any other `this`.
    const fetcher = options.fetch ?? globalThis.fetch;
    this.fetcher = (input, init) => fetcher(input, init);
    const token = options.token;
    this.token = async () => (typeof token === 'function' ? token() : token);
  }

  status(): Promise<Membership> {
    return this.call('SettingsStatus');
  }

  /**
   * Stops forwarding the user's signals at once and records the boundary, with `consent` when given
   * (else the server records USER_REQUEST); leaving while LEFT changes nothing.
   */
  leave(consent?: Consent): Promise<Membership> {
    return consent ? this.call('SettingsLeaveWithReason', { ...consent }) : this.call('SettingsLeave');
  }

  /** Refused with PURGE_IN_PROGRESS while a purge runs. `consent` as for `leave`. */
  rejoin(consent?: Consent): Promise<Membership> {
    return consent ? this.call('SettingsRejoinWithReason', { ...consent }) : this.call('SettingsRejoin');
  }

  /**
   * Whether the browser sends Global Privacy Control (`navigator.globalPrivacyControl`); false
   * outside a browser. The page decides what to do with it, e.g. `leave({ reason:
   * 'GLOBAL_PRIVACY_CONTROL' })` or an offer to; the service records the reason it is given.
   */
  globalPrivacyControl(): boolean {
    const navigator = (globalThis as { navigator?: { globalPrivacyControl?: unknown } }).navigator;
    return navigator?.globalPrivacyControl === true;
  }

  /** The leaves before `beforeNs` (a leave's leftAtNs), newest page. */
  olderLeaves(beforeNs: string): Promise<LeavePage> {
    return this.call('SettingsOlderLeaves', { before: beforeNs });
  }

  /** Starts removing the user's past contributions (only while LEFT, else NOT_LEFT); the receipt may be RUNNING. */
  purge(): Promise<PurgeReceipt> {
    return this.call('SettingsPurge');
  }

  async latestPurge(): Promise<PurgeReceipt | null> {
    return (await this.call<PurgeReceipt[]>('SettingsLatestPurge'))[0] ?? null;
  }

  /** The current standing at once, then every change from any device or instance, reconnecting as needed. Answers with `close`. */
  watchStatus(handlers: LiveHandlers<Membership>): () => void {
    return this.watch('SettingsWatch', 'communityLayerStatusChanged', true, handlers);
  }

  /** The newest purge receipt, then its progress; completes once FINISHED. Nothing comes while there is no purge. */
  watchPurge(handlers: LiveHandlers<PurgeReceipt>): () => void {
    return this.watch('SettingsPurgeProgress', 'communityPurgeProgress', false, handlers);
  }

  private async call<T>(operationName: OperationName, variables?: Record<string, unknown>): Promise<T> {
    return postOperation<T>(
      this.fetcher,
      this.options.url,
      await this.token(),
      operationName,
      variables,
      this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    );
  }

  private watch<T>(operationName: OperationName, field: string, endless: boolean, handlers: LiveHandlers<T>): () => void {
    const { url, reconnectMs = DEFAULT_RECONNECT_MS } = this.options;
    return follow(
      { url, fetcher: this.fetcher, token: this.token, reconnectMs, operationName, endless, pick: (data) => data[field] as T },
      handlers,
    );
  }
}
