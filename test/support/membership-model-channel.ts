import type { Channel, ChannelSubscription, ListenerState } from '../../src/db/listen/channel-listener.js';

/**
 * The model's LISTEN channel. It keeps PostgreSQL's delivery guarantees, because the sync relies on
 * them: within one session, payloads arrive in commit order and each once, and only for commits
 * after its LISTEN. Everything else is a fault it may inject: delivery delayed behind later commits
 * and snapshot reads, a session that goes silent (half-open) before its loss is noticed, sessions
 * lost and reopened, payloads delivered again, and payloads of a dead session delivered late, after
 * those of the next one (reordered).
 */

export class ModelChannel implements Channel {
  currentState: ListenerState = 'idle';
  reconnectCount = 0;
  private session: { queue: string[]; silent: boolean } | null = null;
  private readonly dead: string[][] = [];
  private readonly delivered: string[] = [];
  private resolveStarted: (() => void) | null = null;
  private handlers!: ChannelSubscription;

  subscribe(subscription: ChannelSubscription): void {
    this.handlers = subscription;
  }

  start(): Promise<void> {
    return new Promise((resolve) => (this.resolveStarted = resolve));
  }

  async stop(): Promise<void> {
    this.currentState = 'stopped';
    this.session = null;
    this.resolveStarted?.();
  }

  get silent(): boolean {
    return this.session?.silent ?? false;
  }

  /** Lost (or never opened) and not stopped: connect() would open a session. */
  get reconnectable(): boolean {
    return this.session === null && this.currentState !== 'stopped';
  }

  get queued(): number {
    return this.session?.queue.length ?? 0;
  }

  /** LISTEN on a new session, then the sync's resync, then "listening" (as ChannelListener does). */
  connect(): void {
    if (!this.reconnectable) return;
    const session = { queue: [] as string[], silent: false };
    this.session = session;
    this.currentState = this.currentState === 'idle' ? 'connecting' : 'reconnecting';
    Promise.resolve(this.handlers.onListening?.()).then(
      () => {
        if (this.session !== session || this.currentState === 'stopped') return;
        this.currentState = 'listening';
        this.resolveStarted?.();
      },
      () => this.session === session && this.lose(),
    );
  }

  publish(payloads: string[]): void {
    if (this.session && !this.session.silent) this.session.queue.push(...payloads);
  }

  deliver(n: number): void {
    const session = this.session;
    for (let i = 0; i < n && session && session.queue.length > 0 && this.session === session; i++) {
      this.notify(session.queue.shift()!);
    }
  }

  /** Half-open: nothing more arrives, and nothing tells the sync until the heartbeat does. */
  goSilent(): void {
    if (!this.session || this.session.silent) return;
    this.dead.push(this.session.queue);
    this.session.queue = [];
    this.session.silent = true;
  }

  lose(): void {
    const session = this.session;
    if (!session) return;
    this.session = null;
    this.dead.push(session.queue);
    this.reconnectCount++;
    this.handlers.onLost?.();
    if (this.currentState !== 'stopped') this.currentState = 'reconnecting';
  }

  duplicate(i: number): void {
    if (this.delivered.length > 0) this.handlers.onNotification(this.delivered[i % this.delivered.length]!);
  }

  /** The next undelivered payload of a dead session, after newer ones of the current session. */
  stale(i: number): void {
    const queues = this.dead.filter((queue) => queue.length > 0);
    if (queues.length > 0) this.notify(queues[i % queues.length]!.shift()!);
  }

  private notify(payload: string): void {
    this.delivered.push(payload);
    this.handlers.onNotification(payload);
  }
}
