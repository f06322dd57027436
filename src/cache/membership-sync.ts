import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { Database, MembershipStatus } from '../db/schema.js';
import { ChannelListener, type ListenerState } from './channel-listener.js';
import { MembershipCache, type MembershipChange } from './membership-cache.js';
import { U64HashSet } from './u64-hash-set.js';

export const MEMBERSHIP_CHANNEL = 'community_membership';
const RESTORE_BATCH = 50_000;
const RESTORE_PROGRESS_EVERY = 200_000;

export interface MembershipSyncOptions {
  db: Kysely<Database>;
  connectionString: string;
  applicationName: string;
  logger: Logger;
  listener: Config['listener'];
}

/** Told of every change applied to the cache; `sentAtUs` is the database clock at the write. */
export type MembershipChangeListener = (change: MembershipChange, sentAtUs: bigint) => void;

/**
 * Keeps a MembershipCache equal to the table on every instance: LISTEN first, then a snapshot
 * (full at start, only rows above the applied version after a reconnect), then notifications.
 * While that chain is broken the cache is "not in sync": readiness is false, and only its LEFT
 * answers are used (an ACTIVE answer always goes through the database guard anyway).
 */
export class MembershipSync {
  readonly cache = new MembershipCache();
  private readonly listener: ChannelListener;
  private synced = false;
  private loadedOnce = false;
  private resyncTimer: NodeJS.Timeout | null = null;
  private resyncChain: Promise<void> = Promise.resolve();
  private stats = { resyncs: 0, fullReloads: 0, ignoredNotifications: 0 };
  private readonly changeListeners = new Set<MembershipChangeListener>();
  private readonly resyncListeners = new Set<() => void>();
  private versionWaiters: { version: bigint; resolve(): void }[] = [];

  constructor(private readonly options: MembershipSyncOptions) {
    this.listener = new ChannelListener({
      connectionString: options.connectionString,
      applicationName: options.applicationName,
      channel: MEMBERSHIP_CHANNEL,
      ...options.listener,
      logger: options.logger,
      onNotification: (payload) => this.onNotification(payload),
      onListening: () => this.resync(),
      onLost: () => {
        this.synced = false;
        for (const waiter of this.versionWaiters.splice(0)) waiter.resolve();
      },
    });
  }

  get inSync(): boolean {
    return this.synced && this.listener.currentState === 'listening';
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
    return new Promise((resolve) => {
      const waiter = { version, resolve };
      const timer = setTimeout(() => this.releaseWaiter(waiter), timeoutMs);
      waiter.resolve = () => {
        clearTimeout(timer);
        resolve();
      };
      this.versionWaiters.push(waiter);
    });
  }

  /** Observers such as metrics and subscriptions; returns the unsubscribe function. */
  onChange(listener: MembershipChangeListener): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Told after every snapshot read (changes it applied were not announced one by one). */
  onResync(listener: () => void): () => void {
    this.resyncListeners.add(listener);
    return () => this.resyncListeners.delete(listener);
  }

  async start(): Promise<void> {
    await this.listener.start();
    this.resyncTimer = setInterval(() => void this.resync().catch((error: unknown) => this.resyncFailed(error)), this.options.listener.resyncMs);
    this.resyncTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.synced = false;
    for (const waiter of this.versionWaiters.splice(0)) waiter.resolve();
    await this.listener.stop();
    await this.resyncChain.catch(() => undefined);
  }

  /** One at a time: a full load first, then deltas, with a full reload if the LEFT count drifts. */
  resync(): Promise<void> {
    const run = this.resyncChain.then(async () => {
      if (!this.loadedOnce) {
        await this.fullReload();
        this.loadedOnce = true;
      } else if (!(await this.deltaResync())) {
        await this.fullReload();
      }
      this.stats.resyncs++;
      if (this.listener.currentState !== 'stopped') this.synced = true;
      this.releaseCaughtUp();
      for (const listener of this.resyncListeners) listener();
    });
    this.resyncChain = run.catch(() => undefined);
    return run;
  }

  private releaseWaiter(waiter: { version: bigint; resolve(): void }): void {
    this.versionWaiters = this.versionWaiters.filter((other) => other !== waiter);
    waiter.resolve();
  }

  private releaseCaughtUp(): void {
    if (this.versionWaiters.length === 0) return;
    const applied = this.cache.appliedVersion;
    const due = this.versionWaiters.filter((waiter) => waiter.version <= applied);
    if (due.length === 0) return;
    this.versionWaiters = this.versionWaiters.filter((waiter) => waiter.version > applied);
    for (const waiter of due) waiter.resolve();
  }

  private onNotification(payload: string): void {
    const change = parsePayload(payload);
    if (!change) {
      this.options.logger.warn({ payload }, 'ignoring malformed membership notification');
      return;
    }
    if (!this.cache.applyChange(change.change)) {
      this.stats.ignoredNotifications++;
      return;
    }
    for (const listener of this.changeListeners) listener(change.change, change.sentAtUs);
    this.releaseCaughtUp();
  }

  private async fullReload(): Promise<void> {
    const started = performance.now();
    this.cache.beginSnapshot();
    try {
      const { set, version } = await this.loadLeftUsers();
      this.cache.finishReload(set, version);
      this.stats.fullReloads++;
      this.options.logger.info(
        { entries: set.size, version: version.toString(), ms: Math.round(performance.now() - started) },
        'membership cache loaded',
      );
    } catch (error) {
      this.cache.abortSnapshot();
      throw error;
    }
  }

  /**
   * Streams LEFT users through a server-side cursor (a sequential scan, in batches, the next one
   * requested before the current one is added) from one REPEATABLE READ snapshot, into a set
   * pre-sized from the planner's row estimate so it does not rehash as it fills.
   */
  private loadLeftUsers(): Promise<{ set: U64HashSet; version: bigint }> {
    return this.options.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        const { rows: head } = await sql<{ version: string; estimate: number }>`
          SELECT version, (SELECT reltuples FROM pg_class WHERE oid = 'community_membership'::regclass) AS estimate
            FROM membership_clock`.execute(trx);
        const set = new U64HashSet(Math.max(0, head[0]!.estimate));
        await sql`DECLARE left_users NO SCROLL CURSOR FOR
          SELECT user_id FROM community_membership WHERE status = 'LEFT'`.execute(trx);
        const fetchBatch = () => sql<{ user_id: string }>`FETCH FORWARD ${sql.raw(String(RESTORE_BATCH))} FROM left_users`.execute(trx);
        let pending = fetchBatch();
        for (;;) {
          const { rows } = await pending;
          // The next batch is read and sent by PostgreSQL while this one goes into the set.
          if (rows.length === RESTORE_BATCH) pending = fetchBatch();
          for (const row of rows) set.add(row.user_id);
          if (rows.length < RESTORE_BATCH) break;
          if (set.size % RESTORE_PROGRESS_EVERY < RESTORE_BATCH) {
            this.options.logger.info({ loaded: set.size }, 'loading membership cache');
          }
        }
        set.compact();
        return { set, version: BigInt(head[0]!.version) };
      });
  }

  /** Applies rows above the applied version; false when the LEFT count says a full reload is due. */
  private async deltaResync(): Promise<boolean> {
    this.cache.beginSnapshot();
    const since = this.cache.appliedVersion;
    try {
      const snapshot = await this.readChangesSince(since);
      this.cache.finishDelta(snapshot.rows, snapshot.version);
      // Deletes leave no row behind to resync from; a drifting count catches them.
      return this.cache.appliedVersion !== snapshot.version || this.cache.size === snapshot.leftCount;
    } catch (error) {
      this.cache.abortSnapshot();
      throw error;
    }
  }

  private readChangesSince(since: bigint): Promise<{ version: bigint; leftCount: number; rows: MembershipChange[] }> {
    return this.options.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        const head = await trx
          .selectFrom('membership_clock')
          .select('version')
          .select((eb) =>
            eb
              .selectFrom('community_membership')
              .select(sql<string>`count(*)`.as('n'))
              .where('status', '=', 'LEFT')
              .as('left_count'),
          )
          .executeTakeFirstOrThrow();
        const rows = await trx
          .selectFrom('community_membership')
          .select(['user_id', 'status', 'version'])
          .where('version', '>', since.toString())
          .orderBy('version')
          .execute();
        return {
          version: BigInt(head.version),
          leftCount: Number(head.left_count),
          rows: rows.map((row) => ({ userId: row.user_id, status: row.status, version: BigInt(row.version) })),
        };
      });
  }

  private resyncFailed(error: unknown): void {
    this.options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'membership resync failed');
  }
}

function parsePayload(payload: string): { change: MembershipChange; sentAtUs: bigint } | null {
  const [version, userId, status, sentAtUs] = payload.split(',');
  if (!version || !userId || !sentAtUs || (status !== 'LEFT' && status !== 'ACTIVE')) return null;
  try {
    return { change: { version: BigInt(version), userId, status: status as MembershipStatus }, sentAtUs: BigInt(sentAtUs) };
  } catch {
    return null;
  }
}
