import type { Cluster } from './cluster.js';
import type { WorkloadSizes } from './workload.js';

export interface Sizes {
  workload: WorkloadSizes;
  /** Distinct single-signal bodies, sent in turn. */
  bodies: number;
  connections: number;
  warmupSec: number;
  /** Per arm of a ratio, split over `rounds` alternating runs. */
  durationSec: number;
  rounds: number;
  batchSize: number;
  batchCallers: number;
  /** Leave/rejoin changes per propagation run. */
  changes: number;
  /** LEFT users to restore, among `restoreRows` membership rows (the others rejoined). */
  restoreUsers: number;
  restoreRows: number;
  gateKeys: number;
  gateLookups: number;
  /** Distinct bearer tokens verified per round of the token verification case. */
  verifications: number;
  correctnessSec: number;
  /** Server processes the correctness case runs its load and its leaves and rejoins against. */
  correctnessProcesses: number;
  /** How long the overload case floods the server. */
  overloadSec: number;
  /** Idle subscriptions held open to measure their memory. */
  idleStreams: number;
  /** Ledger entries of the one user the purge case removes. */
  purgeEntries: number;
  /** Outbox rows the change feed replay reads from the start. */
  feedEvents: number;
  /** Signals of the one user the export case downloads. */
  exportSignals: number;
}

/** One line of the table. `met` is null when the row has no target. */
export interface Row {
  case: string;
  figure: string;
  ceiling: string;
  ratio: number | null;
  target: string;
  met: boolean | null;
  crashed?: string;
  details?: Record<string, unknown>;
}

export interface Case {
  /** The labels of the rows it returns, in order (so a crash still names them). */
  labels: readonly string[];
  /**
   * Run before every other case (the table keeps its order): a micro-benchmark measured while the
   * machine is quiet, not while PostgreSQL still works off what an earlier case loaded.
   */
  runsFirst?: boolean;
  run(cluster: Cluster, sizes: Sizes): Promise<Row[]>;
}

/**
 * A case that measures code in its own event loop and needs no cluster (a micro-benchmark). The
 * bench runs it in a process of its own (fresh-process.ts), never in the one that ran other cases.
 */
export interface InProcessCase {
  labels: readonly string[];
  run(sizes: Sizes): Promise<Row[]>;
}
