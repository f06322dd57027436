import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { releaseDeadWorkers, WORKER_LOCK_NAMESPACE } from './queue.store.js';

/** A job locked this recently is left alone: its worker may not have taken its lock yet (it takes it within milliseconds). */
const GRACE_MS = 5_000;
const RECONNECT_MS = 1_000;

/**
 * Tells live delivery workers from dead ones, so a crash costs seconds: graphile-worker releases a
 * dead worker's job only after its 4-hour lock expiry (heartbeats are in its paid edition). Each
 * worker of this instance holds a session advisory lock named by its id on one connection of ours;
 * every `recoveryMs` this instance releases, with `graphile_worker.force_unlock_workers`, the jobs of
 * workers whose lock nobody holds. A killed process' connection closes with it, and with it its
 * locks; a vanished host's, once PostgreSQL's TCP keepalives (set short on this session) give up.
 * A job released while its worker in fact lived (its lock session lost) runs twice: deliveries are
 * at least once, with the same webhook-id.
 */
export class WorkerLiveness {
  private client: pg.PoolClient | null = null;
  private readonly workers = new Set<string>();
  private locking: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<unknown> = Promise.resolve();
  /** A reconnect under way: a stop waits for it, or its session would be kept out of the pool for good (and the pool's end with it). */
  private reconnecting: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
    private readonly recoveryMs: number,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
    const sweep = () => void (this.sweeping = this.sweep()); // at once too: a restarted instance frees what it held before the crash
    sweep();
    this.timer = setInterval(sweep, this.recoveryMs);
    this.timer.unref();
  }

  /** A worker of this instance: its lock is taken before any sweep could count its jobs as dead. */
  hold(workerId: string): void {
    this.workers.add(workerId);
    const client = this.client;
    if (client) this.locking = this.locking.then(() => lock(client, workerId)).catch(() => undefined);
  }

  /** Releases the jobs of dead workers; answers their ids. */
  async sweep(): Promise<string[]> {
    try {
      const released = await releaseDeadWorkers(this.db, GRACE_MS);
      if (released.length > 0) this.logger.warn({ workers: released }, 'released the webhook jobs of delivery workers that died');
      return released;
    } catch (error) {
      this.logger.warn({ err: error }, 'looking for dead delivery workers failed; trying again at the next interval');
      return [];
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all([this.locking, this.sweeping, this.reconnecting]);
    this.client?.release(true); // closed, so its locks go with it
    this.client = null;
  }

  private async connect(): Promise<void> {
    const client = await this.pool.connect();
    client.on('error', (error) => this.lost(client, error));
    try {
      // PostgreSQL notices a vanished host within about 20 s, not the system default of hours.
      await client.query('SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3');
      for (const workerId of this.workers) await lock(client, workerId);
    } catch (error) {
      client.release(true); // half set up: closed, not lent again
      throw error;
    }
    this.client = client;
  }

  private lost(client: pg.PoolClient, error: Error): void {
    if (this.client !== client) return;
    this.client = null;
    client.release(true);
    this.logger.warn({ err: error }, 'the delivery workers lost their liveness session; reconnecting');
    const retry = (): void => {
      if (this.stopped) return;
      this.reconnecting = this.connect().catch(() => setTimeout(retry, RECONNECT_MS).unref());
    };
    setTimeout(retry, RECONNECT_MS).unref();
  }
}

function lock(client: pg.PoolClient, workerId: string): Promise<unknown> {
  return client.query('SELECT pg_advisory_lock($1, hashtext($2))', [WORKER_LOCK_NAMESPACE, workerId]);
}
