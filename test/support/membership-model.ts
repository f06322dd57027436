import { trace } from '@opentelemetry/api';
import pino from 'pino';
import { MembershipSync } from '../../src/membership/cache/membership-sync.js';
import { ModelChannel } from './membership-model-channel.js';
import { USERS, type Action, type Scenario } from './membership-model-scenarios.js';
import { ModelStore } from './membership-model-store.js';

/**
 * A model of the membership store and its LISTEN channel (membership-model-store.ts,
 * membership-model-channel.ts), driven step by step against the real MembershipSync (with its
 * cache, snapshot loader and version waiters) through the histories of membership-model-scenarios.ts.
 */

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
