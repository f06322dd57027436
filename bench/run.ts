// First: every server the bench starts runs in production mode (see production-mode.ts).
import './production-mode.js';
import { loadavg } from 'node:os';
import type { Case, Row, Sizes } from './case.js';
import { batched } from './cases/batched.js';
import { bulkLeave } from './cases/bulk-leave.js';
import { correctness } from './cases/correctness.js';
import { costModel } from './cases/cost-model.js';
import { failover } from './cases/failover.js';
import { fairShare } from './cases/fair-share.js';
import { downstream } from './cases/downstream.js';
import { webhookIsolation } from './cases/webhook-isolation.js';
import { webhookLanes } from './cases/webhook-lanes.js';
import { gateLookup } from './cases/gate-lookup.js';
import { hostile } from './cases/hostile.js';
import { idleSubscriptions } from './cases/idle-subscriptions.js';
import { overload } from './cases/overload.js';
import { processPropagation } from './cases/process-propagation.js';
import { processThroughput } from './cases/process-throughput.js';
import { propagation } from './cases/propagation.js';
import { purge } from './cases/purge.js';
import { refusalCost } from './cases/refusal-cost.js';
import { restore } from './cases/restore.js';
import { sender } from './cases/sender.js';
import { singleSignal } from './cases/single-signal.js';
import { streamCharging } from './cases/stream-charging.js';
import { tokenVerification } from './cases/token-verification.js';
import { tracingCost } from './cases/tracing-cost.js';
import { userExport } from './cases/user-export.js';
import { startCluster } from './cluster.js';
import { markdownTable, summaryLine, writeResults } from './report.js';

const WORKLOAD = { users: 10_000, items: 5_000, zipfExponent: 1.1, leftShare: 0.05, cohortShare: 0.2 };

const SIZES: Record<'quick' | 'full', Sizes> = {
  quick: {
    workload: WORKLOAD,
    bodies: 5_000,
    connections: 32,
    warmupSec: 1,
    durationSec: 3,
    rounds: 1,
    batchSize: 1_000,
    batchCallers: 4,
    changes: 100,
    restoreUsers: 50_000,
    restoreRows: 500_000,
    gateKeys: 100_000,
    gateLookups: 2_000_000,
    verifications: 2_000,
    correctnessSec: 3,
    correctnessProcesses: 2,
    overloadSec: 3,
    idleStreams: 500,
    purgeEntries: 50_000,
    feedEvents: 50_000,
    exportSignals: 50_000,
  },
  full: {
    workload: WORKLOAD,
    bodies: 20_000,
    connections: 32,
    warmupSec: 3,
    durationSec: 15,
    rounds: 3,
    batchSize: 1_000,
    batchCallers: 4,
    changes: 500,
    restoreUsers: 1_000_000,
    restoreRows: 10_000_000,
    gateKeys: 1_000_000,
    gateLookups: 20_000_000,
    verifications: 10_000,
    correctnessSec: 10,
    correctnessProcesses: 4,
    overloadSec: 30,
    idleStreams: 2_000,
    purgeEntries: 1_000_000,
    feedEvents: 1_000_000,
    exportSignals: 1_000_000,
  },
};

const CASES: readonly Case[] = [
  singleSignal,
  batched,
  propagation,
  processPropagation,
  restore,
  gateLookup,
  correctness,
  overload,
  idleSubscriptions,
  tokenVerification,
  purge,
  processThroughput,
  costModel,
  failover,
  hostile,
  tracingCost,
  sender,
  downstream,
  webhookLanes,
  webhookIsolation,
  fairShare,
  streamCharging,
  refusalCost,
  userExport,
  bulkLeave,
];

const mode = process.argv.includes('--quick') ? 'quick' : 'full';
// `--only <text>`: just the cases with a label containing it (e.g. `--only "7."`).
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const selected = only === undefined ? CASES : CASES.filter((benchCase) => benchCase.labels.some((label) => label.includes(only)));
const sizes = SIZES[mode];
const startedAt = new Date();
const started = performance.now();
const log = (message: string) => process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)}s] ${message}\n`);

log(`${mode}: starting embedded PostgreSQL`);
const cluster = await startCluster();
process.once('SIGINT', () => void cluster.stop().finally(() => process.exit(130)));
const rowsOf = new Map<Case, Row[]>();
// Other work on this machine skews every figure; the 1-minute load average before each case says how much.
const timeline: { labels: readonly string[]; seconds: number; loadAverageBefore: number }[] = [];
// Micro-benchmarks first, while the machine is quiet; the table keeps the order of CASES.
const order = [...selected.filter((benchCase) => benchCase.runsFirst), ...selected.filter((benchCase) => !benchCase.runsFirst)];
try {
  for (const benchCase of order) {
    log(benchCase.labels.join(' + '));
    const caseStarted = performance.now();
    const loadAverageBefore = loadavg()[0]!;
    try {
      rowsOf.set(benchCase, await benchCase.run(cluster, sizes));
    } catch (error) {
      log(`crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      const crashed = error instanceof Error ? error.message : String(error);
      rowsOf.set(
        benchCase,
        benchCase.labels.map((label) => ({ case: label, figure: '', ceiling: '', ratio: null, target: '—', met: null, crashed })),
      );
    } finally {
      await cluster.endCase();
      timeline.push({ labels: benchCase.labels, seconds: (performance.now() - caseStarted) / 1000, loadAverageBefore });
    }
  }
} finally {
  await cluster.stop();
}
const rows = selected.flatMap((benchCase) => rowsOf.get(benchCase) ?? []);

const wallSeconds = (performance.now() - started) / 1000;
const file = await writeResults({ mode, startedAt, wallSeconds, sizes, rows, timeline });
log(`wall time ${wallSeconds.toFixed(1)} s; results in ${file}`);
process.stdout.write(`${markdownTable(rows)}\n\n${summaryLine(mode, rows)}\n`);
process.exitCode = rows.some((row) => row.crashed) ? 1 : 0;
