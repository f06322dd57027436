import { SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Channel, ListenerState } from '../../db/listen/channel-listener.js';
import { AppliedFanOut, type MembershipChangeListener } from './applied-fan-out.js';
import { MembershipCache } from './membership-cache.js';
import type { MembershipSource } from './membership-source.js';
import { SnapshotLoader } from './snapshot-loader.js';
import { VersionWaiters } from './version-waiters.js';

export interface MembershipSyncOptions {
  source: MembershipSource;
  logger: Logger;
  tracer: Tracer;
  /** Period of the backstop resync. */
  resyncMs: number;
  /** The instance's LISTEN session (in production its ChannelListener), which the composition root starts and stops. */
  channel: Channel;
}

/**
 * Keeps a MembershipCache equal to the table on every instance: LISTEN first, then a snapshot
 * (full at start, only rows above the applied version after a reconnect), then notifications.
 * While that chain is broken the cache is "not in sync": readiness is false, and only its LEFT
 * answers are used (an ACTIVE answer always goes through the database guard anyway).
 * test/membership-sync.model.test.ts checks these rules against a model of the store and channel.
 */
export class MembershipSync {
  readonly cache = new MembershipCache();
  private readonly listener: Channel;
  private readonly loader: SnapshotLoader;
  private readonly waiters = new VersionWaiters();
  private loadedOnce = false;
  /** The LISTEN session: up from a LISTEN until its loss; `breaks` counts losses. */
  private readonly session = { up: false, breaks: 0 };
  private resyncTimer: NodeJS.Timeout | null = null;
  private resyncChain: Promise<void> = Promise.resolve();
  private stats = { resyncs: 0, fullReloads: 0, ignoredNotifications: 0 };
  private readonly fanOut = new AppliedFanOut(() => this.waiters.reached(this.cache.appliedVersion));
  private readonly resyncListeners = new Set<() => void>();

  constructor(private readonly options: MembershipSyncOptions) {
    this.loader = new SnapshotLoader(this.cache, options.source, options.logger);
    this.listener = options.channel;
    this.listener.subscribe({
      channel: options.source.channel,
      onNotification: (payload) => this.onNotification(payload),
      onListening: () => {
        this.session.up = true;
        return this.resync();
      },
      onLost: () => {
        this.session.up = false;
        this.session.breaks++;
        this.cache.markGap();
        this.waiters.releaseAll();
      },
    });
  }

  get inSync(): boolean {
    return this.cache.followsNotifications && this.listener.currentState === 'listening';
  }

  get listenerState(): ListenerState {
    return this.listener.currentState;
  }

  get counters(): Readonly<{ resyncs: number; fullReloads: number; ignoredNotifications: number; reconnects: number }> {
    return { ...this.stats, reconnects: this.listener.reconnectCount };
  }

  /**
   * Resolves when the cache has applied `version`, or at once while not in sync (a request must not
   * stall on a lost listener), or after `timeoutMs`.
   */
  caughtUp(version: bigint, timeoutMs = 2_000): Promise<void> {
    if (this.cache.appliedVersion >= version || !this.inSync) return Promise.resolve();
    return this.waiters.wait(version, timeoutMs);
  }

  /** Observers such as metrics and subscriptions; returns the unsubscribe function. */
  onChange(listener: MembershipChangeListener): () => void {
    return this.fanOut.add(listener);
  }

  /** Told after every snapshot read (changes it applied were not announced one by one). */
  onResync(listener: () => void): () => void {
    this.resyncListeners.add(listener);
    return () => this.resyncListeners.delete(listener);
  }

  /** The backstop, once the session is listening (its first LISTEN loaded the cache). */
  start(): void {
    this.resyncTimer = setInterval(() => void this.resync().catch((error: unknown) => this.resyncFailed(error)), this.options.resyncMs);
    this.resyncTimer.unref();
  }

  /** Before the session stops: the backstop ends, waiters are released, the resync under way finishes. */
  async stop(): Promise<void> {
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.waiters.releaseAll();
    await this.resyncChain.catch(() => undefined);
  }

  /** One at a time: a full load first, then deltas, with a full reload if the LEFT count drifts. */
  resync(): Promise<void> {
    const run = this.resyncChain.then(() =>
      this.options.tracer.startActiveSpan('membership resync', { root: true }, (span) => traced(span, () => this.readSnapshot(span))),
    );
    this.resyncChain = run.catch(() => undefined);
    return run;
  }

  private async readSnapshot(span: Span): Promise<void> {
    const unbroken = this.watchSession();
    if (!this.loadedOnce) {
      span.setAttribute('membership.resync.kind', 'full');
      await this.fullReload(unbroken);
      this.loadedOnce = true;
    } else if (!(await this.loader.deltaResync(unbroken))) {
      // The set drifted: not in sync until the reload is done.
      span.setAttribute('membership.resync.kind', 'delta, then full (drift)');
      this.waiters.releaseAll();
      await this.fullReload(unbroken);
    } else {
      span.setAttribute('membership.resync.kind', 'delta');
    }
    this.stats.resyncs++;
    this.waiters.reached(this.cache.appliedVersion);
    for (const listener of this.resyncListeners) listener();
  }

  private async fullReload(unbroken: () => boolean): Promise<void> {
    await this.loader.fullReload(unbroken);
    this.stats.fullReloads++;
  }

  /** Whether the LISTEN session up now is still the one up, unbroken, when asked later. */
  private watchSession(): () => boolean {
    const { up, breaks } = this.session;
    return () => up && this.session.breaks === breaks;
  }

  /** Applies at once; waiters and listeners follow in a later task (AppliedFanOut). */
  private onNotification(payload: string): void {
    const notification = this.options.source.decodeNotification(payload);
    if (!notification) {
      this.options.logger.warn({ payload }, 'ignoring malformed membership notification');
      return;
    }
    if (!this.cache.applyChange(notification.change)) {
      this.stats.ignoredNotifications++;
      return;
    }
    this.fanOut.applied(notification.change, notification.sentAtUs);
  }

  private resyncFailed(error: unknown): void {
    this.options.logger.warn({ err: error }, 'membership resync failed');
  }
}

/** Runs `work` as `span`'s content: ended when it settles, marked failed when it throws. */
async function traced(span: Span, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}
