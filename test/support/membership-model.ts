import { trace } from '@opentelemetry/api';
import fc from 'fast-check';
import pino from 'pino';
import type { Channel, ChannelSubscription, ListenerState } from '../../src/db/listen/channel-listener.js';
import type { LeftUsersReader, MembershipDelta, MembershipSource } from '../../src/membership/cache/membership-source.js';
import { MembershipSync } from '../../src/membership/cache/membership-sync.js';
import type { MembershipStatus } from '../../src/db/schema.js';
import { decodeMembershipNotification, MEMBERSHIP_CHANNEL } from '../../src/membership/membership-notification.js';

/**
 * A model of the membership store and its LISTEN channel, driven step by step against the real
 * MembershipSync (with its cache, snapshot loader and version waiters).
 *
 * The store keeps PostgreSQL's version semantics: one clock bumped per written row, in commit
 * order, some versions used by no row (INSERT … ON CONFLICT stamps the insert attempt too), a
 * delete announced as ACTIVE with a fresh version and no row left behind. A transaction's
 * notifications are published at its commit.
 *
 * The channel keeps PostgreSQL's delivery guarantees, because the sync relies on them: within one
 * session, payloads arrive in commit order and each once, and only for commits after its LISTEN.
 * Everything else is a fault it may inject: delivery delayed behind later commits and snapshot
 * reads, a session that goes silent (half-open) before its loss is noticed, sessions lost and
 * reopened, payloads delivered again, and payloads of a dead session delivered late, after those of
 * the next one (reordered).
 */

/** Small on purpose (collisions are the point); 0 and 2^64-1 are the hash set's edge keys. */
export const USERS = ['0', '1', '2', '3', '4294967296', '18446744073709551615'] as const;

export type Action =
  | { t: 'leave' | 'rejoin' | 'insertLeft' | 'insertActive' | 'delete'; user: number }
  | { t: 'transaction'; writes: { user: number; leave: boolean }[] }
  | { t: 'burn' }
  | { t: 'deliver'; n: number }
  | { t: 'duplicate'; i: number }
  | { t: 'stale'; i: number }
  | { t: 'silent' }
  | { t: 'lose' }
  | { t: 'connect' }
  | { t: 'read'; fail: boolean }
  | { t: 'backstop' }
  | { t: 'wait' };

export interface Scenario {
  /** Users who left before the instance started. */
  initiallyLeft: number[];
  actions: Action[];
}

const user = fc.integer({ min: 0, max: USERS.length - 1 });

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constantFrom('leave' as const, 'rejoin' as const), user }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constantFrom('insertLeft' as const, 'insertActive' as const, 'delete' as const), user }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('transaction' as const),
      writes: fc.array(fc.record({ user, leave: fc.boolean() }), { minLength: 2, maxLength: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'burn' as const }) },
  { weight: 6, arbitrary: fc.record({ t: fc.constant('deliver' as const), n: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constantFrom('duplicate' as const, 'stale' as const), i: fc.nat(50) }) },
  { weight: 1, arbitrary: fc.constant({ t: 'silent' as const }) },
  { weight: 2, arbitrary: fc.constant({ t: 'lose' as const }) },
  { weight: 3, arbitrary: fc.constant({ t: 'connect' as const }) },
  { weight: 7, arbitrary: fc.constant({ t: 'read' as const, fail: false }) },
  { weight: 1, arbitrary: fc.constant({ t: 'read' as const, fail: true }) },
  { weight: 2, arbitrary: fc.constant({ t: 'backstop' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'wait' as const }) },
);

export const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  initiallyLeft: fc.subarray(USERS.map((_, i) => i)),
  actions: fc.array(actionArb, { maxLength: 120, size: 'max' }),
});

/** User ids as the store hands them to the cache: big-endian u64s, 8 bytes each. */
export function packUserIds(userIds: readonly string[]): Uint8Array {
  const packed = new Uint8Array(userIds.length * 8);
  const view = new DataView(packed.buffer);
  userIds.forEach((userId, i) => view.setBigUint64(i * 8, BigInt(userId)));
  return packed;
}

type StoreOp =
  | { kind: 'leave' | 'rejoin' | 'delete'; userId: string }
  | { kind: 'insert'; userId: string; status: MembershipStatus }
  | { kind: 'burn' };

interface PendingRead {
  /** Advances the read by one step: the snapshot is taken, a batch handed over, or the result returned. */
  step(): boolean;
  fail(): void;
}

/** The membership table, its version clock and its snapshot reads, in memory. */
export class ModelStore implements MembershipSource {
  readonly channel = MEMBERSHIP_CHANNEL;
  readonly decodeNotification = decodeMembershipNotification;
  clock = 0n;
  readonly rows = new Map<string, { status: MembershipStatus; version: bigint }>();
  /** Every committed row change in version order; status null is a delete. */
  private readonly log: { version: bigint; userId: string; status: MembershipStatus | null }[] = [];
  readonly reads: PendingRead[] = [];
  onCommit: (payloads: string[]) => void = () => undefined;
  private closed = false;

  commit(ops: StoreOp[]): void {
    const payloads: string[] = [];
    for (const op of ops) {
      if (op.kind === 'burn') {
        this.clock++;
        continue;
      }
      const row = this.rows.get(op.userId);
      if (op.kind === 'leave' && row?.status !== 'LEFT') {
        if (row) this.clock++; // INSERT … ON CONFLICT DO UPDATE: the insert attempt was stamped first
        this.write(op.userId, 'LEFT', payloads);
      } else if (op.kind === 'rejoin' && row?.status === 'LEFT') {
        this.write(op.userId, 'ACTIVE', payloads);
      } else if (op.kind === 'insert' && !row) {
        this.write(op.userId, op.status, payloads);
      } else if (op.kind === 'delete' && row) {
        this.rows.delete(op.userId);
        const version = ++this.clock;
        this.log.push({ version, userId: op.userId, status: null });
        payloads.push(`${version},${op.userId},ACTIVE,0`);
      }
    }
    if (payloads.length > 0) this.onCommit(payloads);
  }

  private write(userId: string, status: MembershipStatus, payloads: string[]): void {
    const version = ++this.clock;
    this.rows.set(userId, { status, version });
    this.log.push({ version, userId, status });
    payloads.push(`${version},${userId},${status},0`);
  }

  get lastWrite(): bigint {
    return this.log.at(-1)?.version ?? 0n;
  }

  /** The LEFT users once every change up to `version` committed. */
  leftAt(version: bigint): Set<string> {
    const left = new Set<string>();
    for (const change of this.log) {
      if (change.version > version) break;
      if (change.status === 'LEFT') left.add(change.userId);
      else left.delete(change.userId);
    }
    return left;
  }

  private currentLeft(): string[] {
    return [...this.rows].filter(([, row]) => row.status === 'LEFT').map(([userId]) => userId);
  }

  readLeftUsers(reader: LeftUsersReader): Promise<bigint> {
    return this.read<bigint>((resolve) => {
      let snapshot: { version: bigint; ids: string[] } | null = null;
      return () => {
        if (!snapshot) {
          snapshot = { version: this.clock, ids: this.currentLeft() };
          reader.expect(snapshot.ids.length);
          return false;
        }
        if (snapshot.ids.length > 0) {
          reader.add(packUserIds(snapshot.ids.splice(0, 2)));
          return false;
        }
        resolve(snapshot.version);
        return true;
      };
    });
  }

  readChangesSince(since: bigint): Promise<MembershipDelta> {
    return this.read<MembershipDelta>((resolve) => {
      let snapshot: MembershipDelta | null = null;
      return () => {
        if (!snapshot) {
          snapshot = {
            version: this.clock,
            leftCount: this.currentLeft().length,
            rows: [...this.rows]
              .filter(([, row]) => row.version > since)
              .sort(([, a], [, b]) => (a.version < b.version ? -1 : 1))
              .map(([userId, row]) => ({ userId, status: row.status, version: row.version })),
          };
          return false;
        }
        resolve(snapshot);
        return true;
      };
    });
  }

  private read<T>(steps: (resolve: (value: T) => void) => () => boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) return reject(new Error('store closed'));
      const read: PendingRead = { step: steps(resolve), fail: () => reject(new Error('snapshot read failed')) };
      this.reads.push(read);
    });
  }

  /** Advances (or fails) the oldest pending read; the sync reads one snapshot at a time. */
  advanceRead(fail: boolean): void {
    const read = this.reads[0];
    if (!read) return;
    if (fail) read.fail();
    if (fail || read.step()) this.reads.shift();
  }

  close(): void {
    this.closed = true;
    for (const read of this.reads.splice(0)) read.fail();
  }
}

/** The LISTEN session, with the guarantees and faults described at the top of this file. */
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

/** Lets every promise continuation run: the sync awaits only the store's promises. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const silentLogger = pino({ level: 'silent' });

/**
 * Runs one scenario and throws at the first step where the instance breaks a rule:
 * - the applied version never falls and never passes the store's clock;
 * - no ACTIVE answer for a user whose current row is LEFT at or below the applied version;
 * - while the instance reports in sync, its LEFT set is the store's at the applied version;
 * - a read-your-writes waiter released while in sync finds its version applied;
 * - once faults stop, every notification is delivered and reads finish, the instance is in sync
 *   and equal to the store, every waiter is released, and a backstop brings it to the clock.
 */
export async function runScenario(scenario: Scenario): Promise<void> {
  const store = new ModelStore();
  for (const index of scenario.initiallyLeft) store.commit([{ kind: 'leave', userId: USERS[index]! }]);
  const open = new ModelChannel();
  const sync = new MembershipSync({
    source: store,
    logger: silentLogger,
    tracer: trace.getTracer('membership model'),
    resyncMs: 3_600_000,
    channel: open,
  });
  store.onCommit = (payloads) => open.publish(payloads);
  let waiting = 0;
  let lowest = 0n;
  const broken: string[] = [];
  const check = (step: string) => {
    if (broken.length > 0) throw new Error(`${step}: ${broken[0]}`);
    const applied = sync.cache.appliedVersion;
    if (applied < lowest) throw new Error(`${step}: applied version fell from ${lowest} to ${applied}`);
    if (applied > store.clock) throw new Error(`${step}: applied version ${applied} is past the clock ${store.clock}`);
    lowest = applied;
    for (const userId of USERS) {
      const row = store.rows.get(userId);
      if (row?.status === 'LEFT' && row.version <= applied && !sync.cache.isLeft(userId)) {
        throw new Error(`${step}: ACTIVE answer for user ${userId}, LEFT at version ${row.version} <= applied ${applied}`);
      }
    }
    if (sync.inSync) expectLeftSet(sync, store.leftAt(applied), `${step}: in sync at version ${applied}`);
  };
  const started = open.start();
  sync.start();
  try {
    open.connect();
    await settle();
    check('start');
    for (const [n, action] of scenario.actions.entries()) {
      perform(action, store, open, sync, {
        wait(version) {
          waiting++;
          void sync.caughtUp(version, 3_600_000).then(() => {
            waiting--;
            if (sync.inSync && sync.cache.appliedVersion < version) {
              broken.push(`waiter for ${version} released in sync at ${sync.cache.appliedVersion}`);
            }
          });
        },
      });
      await settle();
      check(`step ${n} ${JSON.stringify(action)}`);
    }
    await quiesce(store, open, sync);
    if (!sync.inSync) throw new Error(`not in sync once faults stopped (listener ${open.currentState})`);
    expectLeftSet(sync, store.leftAt(store.clock), 'once faults stopped');
    if (waiting > 0) throw new Error(`${waiting} read-your-writes waiters never released`);
    void sync.resync();
    await quiesce(store, open, sync);
    if (sync.cache.appliedVersion !== store.clock) {
      throw new Error(`a backstop run ended at version ${sync.cache.appliedVersion}, not the clock ${store.clock}`);
    }
    check('after the last backstop');
  } finally {
    store.close();
    await settle();
    await sync.stop();
    await open.stop();
    await started;
  }
}

function perform(
  action: Action,
  store: ModelStore,
  channel: ModelChannel,
  sync: MembershipSync,
  hooks: { wait(version: bigint): void },
): void {
  switch (action.t) {
    case 'leave':
    case 'rejoin':
    case 'delete':
      return store.commit([{ kind: action.t, userId: USERS[action.user]! }]);
    case 'insertLeft':
    case 'insertActive':
      return store.commit([{ kind: 'insert', userId: USERS[action.user]!, status: action.t === 'insertLeft' ? 'LEFT' : 'ACTIVE' }]);
    case 'transaction':
      return store.commit(action.writes.map((write) => ({ kind: write.leave ? 'leave' : 'rejoin', userId: USERS[write.user]! })));
    case 'burn':
      return store.commit([{ kind: 'burn' }]);
    case 'deliver':
      return channel.deliver(action.n);
    case 'duplicate':
      return channel.duplicate(action.i);
    case 'stale':
      return channel.stale(action.i);
    case 'silent':
      return channel.goSilent();
    case 'lose':
      return channel.lose();
    case 'connect':
      return channel.connect();
    case 'read':
      return store.advanceRead(action.fail);
    case 'backstop':
      // As the timer does: a failed run is logged and retried at the next tick.
      return void sync.resync().catch(() => undefined);
    case 'wait':
      if (store.lastWrite > 0n) hooks.wait(store.lastWrite);
      return;
  }
}

/**
 * No more faults: the heartbeat notices a silent session, it reconnects, everything is delivered
 * and read, and the backstop timer runs while the instance is not in sync (a failed reload waits
 * for it).
 */
async function quiesce(store: ModelStore, channel: ModelChannel, sync: MembershipSync): Promise<void> {
  if (channel.silent) channel.lose();
  for (let round = 0; round < 10_000; round++) {
    await settle();
    if (channel.reconnectable) channel.connect();
    else if (channel.queued > 0) channel.deliver(channel.queued);
    else if (store.reads.length > 0) store.advanceRead(false);
    else if (!sync.inSync && channel.currentState === 'listening') void sync.resync();
    else return;
  }
  throw new Error('the sync kept reading without end');
}

function expectLeftSet(sync: MembershipSync, expected: Set<string>, context: string): void {
  const actual = USERS.filter((userId) => sync.cache.isLeft(userId));
  if (actual.length !== expected.size || actual.some((userId) => !expected.has(userId)) || sync.cache.size !== expected.size) {
    throw new Error(`${context}: LEFT set is [${actual.join(' ')}] (size ${sync.cache.size}), the store's is [${[...expected].join(' ')}]`);
  }
}
