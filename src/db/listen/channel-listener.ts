import type pg from 'pg';
import type { Logger } from 'pino';
import type { DatabaseEndpoint } from '../endpoint/database-endpoint.js';
import { destroySocket, reconnectDelay, startHeartbeat } from './session-loss.js';

export type ListenerState = 'idle' | 'connecting' | 'listening' | 'reconnecting' | 'stopped';

/** One follower of a channel: what the session tells it. */
export interface ChannelSubscription {
  channel: string;
  /** Payloads of one session arrive in commit order, each once. */
  onNotification(payload: string): void;
  /**
   * Runs after every successful LISTEN (first connect and each reconnect), before "listening":
   * notifications sent while there was no session are gone, so re-read what is followed.
   */
  onListening?(): Promise<void> | void;
  /** The session broke: notifications from now until the next LISTEN are gone. */
  onLost?(): void;
}

/** The instance's one LISTEN session, as its followers see it. */
export interface Channel {
  readonly currentState: ListenerState;
  readonly reconnectCount: number;
  /** Before the session starts: it LISTENs on the channel from its first connection on. */
  subscribe(subscription: ChannelSubscription): void;
}

export interface ChannelListenerOptions {
  /** Where to connect: the listener follows the primary like every other connection. */
  endpoint: DatabaseEndpoint;
  applicationName: string;
  heartbeatMs: number;
  heartbeatTimeoutMs: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  logger: Logger;
  onStateChange?(state: ListenerState): void;
}

/**
 * A LISTEN session on its own connection, outside the pool (a pooled or transaction-pooled
 * connection would drop the subscription). Loss is detected by 'error'/'end' events and by a
 * heartbeat with a timeout (a half-open socket raises nothing by itself); it then reconnects
 * forever, one attempt at a time, with capped exponential backoff and full jitter. One per
 * instance, whatever it follows: each follower subscribes to its channel before the start.
 */
export class ChannelListener implements Channel {
  private readonly subscriptions: ChannelSubscription[] = [];
  private client: pg.Client | null = null;
  private state: ListenerState = 'idle';
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private reconnects = 0;
  private resolveStarted: (() => void) | null = null;

  constructor(private readonly options: ChannelListenerOptions) {}

  get currentState(): ListenerState {
    return this.state;
  }

  get reconnectCount(): number {
    return this.reconnects;
  }

  subscribe(subscription: ChannelSubscription): void {
    if (this.state !== 'idle') throw new Error(`subscribed to ${subscription.channel} after the listener started`);
    this.subscriptions.push(subscription);
  }

  /** Resolves once listening the first time (retrying until then), every follower's onListening done. */
  start(): Promise<void> {
    return new Promise((resolve) => {
      this.resolveStarted = resolve;
      void this.connect();
    });
  }

  async stop(): Promise<void> {
    this.setState('stopped');
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.stopHeartbeat();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.state === 'stopped') return;
    this.setState(this.reconnects === 0 && this.attempt === 0 ? 'connecting' : 'reconnecting');
    const client = this.options.endpoint.client({
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: this.options.heartbeatTimeoutMs,
      application_name: this.options.applicationName,
    });
    // Handlers go on before anything can fail: an unhandled 'error' would crash the process.
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, 'connection ended'));
    client.on('notification', (message) => {
      if (this.client !== client || !message.payload) return;
      for (const follower of this.subscriptions) if (follower.channel === message.channel) follower.onNotification(message.payload);
    });
    this.client = client;
    try {
      await client.connect();
      for (const channel of this.channels()) await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
      for (const follower of this.subscriptions) await follower.onListening?.();
      if (this.client !== client || this.isStopped()) return;
      this.attempt = 0;
      this.startHeartbeat(client);
      this.setState('listening');
    } catch (error) {
      this.lost(client, error);
    }
  }

  /** `cause`: the error, or a sentence when nothing failed but the session is no longer usable. */
  private lost(client: pg.Client, cause: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    this.stopHeartbeat();
    // Late errors from the dead client must not crash us.
    client.removeAllListeners('notification');
    client.on('error', () => undefined);
    destroySocket(client);
    if (this.state === 'stopped') return;
    this.options.logger.warn(
      { ...(typeof cause === 'string' ? { reason: cause } : { err: cause }), attempt: this.attempt + 1 },
      'listener lost; reconnecting',
    );
    for (const follower of this.subscriptions) follower.onLost?.();
    this.setState('reconnecting');
    const delay = reconnectDelay(this.attempt, this.options.backoffMinMs, this.options.backoffMaxMs);
    this.attempt++;
    this.reconnects++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect();
    }, delay);
  }

  private startHeartbeat(client: pg.Client): void {
    const { heartbeatMs: everyMs, heartbeatTimeoutMs: timeoutMs } = this.options;
    this.heartbeatTimer = startHeartbeat(client, this.channels(), { everyMs, timeoutMs }, (cause) => this.lost(client, cause));
  }

  private stopHeartbeat(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  private channels(): string[] {
    return [...new Set(this.subscriptions.map((follower) => follower.channel))];
  }

  private isStopped(): boolean {
    return this.state === 'stopped';
  }

  private setState(state: ListenerState): void {
    if (this.state === state || this.state === 'stopped') return;
    this.state = state;
    this.options.logger.info({ state }, 'listener state');
    this.options.onStateChange?.(state);
    if (state === 'listening' || state === 'stopped') {
      this.resolveStarted?.();
      this.resolveStarted = null;
    }
  }
}
