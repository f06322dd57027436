import { aggregateMismatches, boundaryViolations, type Operation } from '../../tooling/invariants.js';
import type { Case } from '../case.js';
import { graphql, leaveUsers } from '../cluster.js';
import { num } from '../format.js';
import { httpLoad, mergeSamples } from '../load.js';
import { body, createWorkload, LEAVE, REJOIN, SIGNAL } from '../workload.js';

const LABEL = '6. boundary under load (I1, I2, I3)';
const HOT_USERS = 64;
const SIGNAL_CLIENTS = 8;
const MEMBERSHIP_CLIENTS = 2;

/**
 * Real server processes on one database (one event loop each, caches kept by LISTEN/NOTIFY as in
 * production): the single-signal load spread over them while recorded clients send signals for a
 * few hot users to any process and others leave and rejoin those users on any process; then the
 * test suite's checkers run over the recorded history (I2, stored-as-reported) and the whole
 * database (I1, I3).
 */
export const correctness: Case = {
  labels: [LABEL],
  async run(cluster, sizes) {
    const url = await cluster.freshDatabase();
    const db = await cluster.sqlClient(url);
    const workload = createWorkload(sizes.workload, 6);
    // Before the processes start, so each restores them as a starting instance does (readiness waits for it).
    await leaveUsers(db, workload.leftUserIds, []);
    const targets = (await cluster.startProcesses(url, sizes.correctnessProcesses)).urls.map((target) => ({ url: target }));
    const hot = workload.userIds.slice(0, HOT_USERS);
    const pick = <T>(items: readonly T[]) => items[Math.floor(Math.random() * items.length)]!;

    const history: Operation[] = [];
    const perform = async (kind: Operation['kind'], userId: string, instance: number) => {
      const start = performance.now();
      let outcome: Pick<Operation, 'ok' | 'signalId' | 'forwarded' | 'cohortsAttributed'> = { ok: false };
      try {
        if (kind === 'signal') {
          const { signal } = await graphql(targets[instance]!, cluster.token, SIGNAL, { input: { ...workload.nextSignal(), userId } });
          outcome = { ok: true, signalId: signal.signalId, forwarded: signal.forwarded, cohortsAttributed: signal.cohortsAttributed };
        } else {
          await graphql(targets[instance]!, cluster.token, kind === 'leave' ? LEAVE : REJOIN, { userId });
          outcome = { ok: true };
        }
      } catch {
        // Kept in the history as not ok: the checkers skip it, the failure count reports it.
      }
      history.push({ kind, userId, instance, start, end: performance.now(), ...outcome });
    };

    let running = true;
    const bodies = Array.from({ length: sizes.bodies }, () => body(SIGNAL, { input: workload.nextSignal() }));
    // Spread evenly, one load generator per process, as a load balancer would.
    const background = Promise.all(
      targets.map((target, i) =>
        httpLoad({
          url: target.url,
          token: cluster.token,
          bodies: bodies.filter((_, k) => k % targets.length === i),
          connections: Math.max(1, Math.round(sizes.connections / targets.length)),
          durationSec: sizes.correctnessSec,
        }),
      ),
    )
      .then(mergeSamples)
      .finally(() => (running = false));
    const loop = async (step: () => Promise<void>) => {
      while (running) await step();
    };
    const [load] = await Promise.all([
      background,
      ...Array.from({ length: SIGNAL_CLIENTS }, () => loop(() => perform('signal', pick(hot), Math.floor(Math.random() * targets.length)))),
      ...Array.from({ length: MEMBERSHIP_CLIENTS }, () =>
        loop(() => perform(Math.random() < 0.5 ? 'leave' : 'rejoin', pick(hot), Math.floor(Math.random() * targets.length))),
      ),
    ]);

    const violations = await boundaryViolations(db, history);
    const mismatches = await aggregateMismatches(db);
    const failed = history.filter((op) => !op.ok).length + load.failed;
    const signals = history.filter((op) => op.kind === 'signal' && op.ok);
    const forwarded = signals.filter((op) => op.forwarded).length;
    return [
      {
        case: LABEL,
        figure: `${violations.length} violations, ${mismatches.length} aggregate mismatches, ${failed} failed (${targets.length} processes, ${num(history.length)} recorded ops, ${num(load.requests)} background signals)`,
        ceiling: '—',
        ratio: null,
        target: '0 / 0 / 0',
        met: violations.length === 0 && mismatches.length === 0 && failed === 0,
        details: {
          recorded: {
            signals: signals.length,
            forwarded,
            gated: signals.length - forwarded,
            leaves: history.filter((op) => op.kind === 'leave').length,
            rejoins: history.filter((op) => op.kind === 'rejoin').length,
          },
          processes: targets.length,
          background: { signals: load.requests, failed: load.failed, firstFailure: load.firstFailure, durationSec: load.durationSec },
          violations: violations.slice(0, 20),
          mismatches: mismatches.slice(0, 20),
        },
      },
    ];
  },
};
