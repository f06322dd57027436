import type { Row } from '../case.js';
import type { FloodResult } from '../flood.js';
import { ms, num } from '../format.js';
import type { OpenLoopSample } from '../open-loop.js';
import { summarize } from '../stats.js';
import { ADMITTED, BUDGET, FLOOD_WARMUP_SEC, FLOOR, MEMBERSHIP, P99, STEADY_PER_SEC } from './fair-share-settings.js';

// The flood case's rows, from the samples of its rounds: the others' p99 flooded and against the floor, and what the flooder got in.

export interface Samples {
  quiet: OpenLoopSample[];
  flooded: OpenLoopSample[];
  /** The steady load while the flood went to bare refusing servers instead (refuser.ts). */
  floor: OpenLoopSample[];
  /** Each flood's first second, while its full bucket is spent: in the details, not in the ratio. */
  burst: OpenLoopSample[];
  floods: FloodResult[];
  /** From the first quiet window to the last flood's end: the membership window refills over it all. */
  spanSec: number;
  windowSec: number;
  /** The servers' CPU over the quiet and the flooded windows (equal lengths): what the flood added. */
  cpuMs: { quiet: number; flooded: number };
}

function pooled(samples: OpenLoopSample[]): OpenLoopSample {
  const [first, ...rest] = samples as [OpenLoopSample, ...OpenLoopSample[]];
  const all = { ...first, okMs: [...first.okMs], shedMs: [...first.shedMs] };
  for (const one of rest) {
    all.sent += one.sent;
    all.okMs.push(...one.okMs);
    all.shedMs.push(...one.shedMs);
    all.failures += one.failures;
    all.firstFailure ??= one.firstFailure;
  }
  return all;
}

export function rowsFor(count: number, samples: Samples): Row[] {
  const [quiet, flooded, floor, burst] = [pooled(samples.quiet), pooled(samples.flooded), pooled(samples.floor), pooled(samples.burst)];
  const [calm, stormy, least] = [summarize(quiet.okMs), summarize(flooded.okMs), summarize(floor.okMs)];
  const seconds = samples.floods.reduce((sum, flood) => sum + flood.seconds, 0);
  const sum = (field: 'admittedPoints' | 'admittedChanges' | 'refused' | 'sent') =>
    samples.floods.reduce((total, flood) => total + flood[field], 0);
  // Each flood starts from a full bucket at most (the quiet window refills it), and spends what refills meanwhile.
  const allowed = samples.floods.length * BUDGET.capacity + BUDGET.rate * seconds;
  const changesAllowed = MEMBERSHIP.changes + (MEMBERSHIP.changes / MEMBERSHIP.windowSec) * samples.spanSec;
  const latencyRatio = stormy.p99 / calm.p99;
  const floorRatio = least.p99 / calm.p99;
  const admittedRatio = sum('admittedPoints') / allowed;
  const others = (sample: OpenLoopSample) => ({
    sent: sample.sent,
    ok: sample.okMs.length,
    shed: sample.shedMs.length,
    failures: sample.failures,
    firstFailure: sample.firstFailure,
  });
  return [
    {
      case: P99(count),
      figure: `p99 ${ms(stormy.p99)} (p50 ${ms(stormy.p50)}), ${num(flooded.okMs.length)} of ${num(flooded.sent)} answered`,
      ceiling: `no flood p99 ${ms(calm.p99)} (p50 ${ms(calm.p50)}), ${samples.quiet.length} rounds each`,
      ratio: latencyRatio,
      target: '≤ 1.5',
      met: latencyRatio <= 1.5 && flooded.failures === 0,
      details: {
        serverCpu: floodCpu(samples),
        floorRatio,
        quiet: others(quiet),
        flooded: others(flooded),
        burst: { ...others(burst), p99Ms: summarize(burst.okMs).p99 },
        steadyPerSec: STEADY_PER_SEC,
        floodWarmupSec: FLOOD_WARMUP_SEC,
      },
    },
    {
      case: FLOOR(count),
      figure: `p99 ${ms(least.p99)} (p50 ${ms(least.p50)}), ${num(floor.okMs.length)} of ${num(floor.sent)} answered`,
      ceiling: `no flood p99 ${ms(calm.p99)} (p50 ${ms(calm.p50)}); with the service refusing it ${ms(stormy.p99)}`,
      ratio: floorRatio,
      target: '—',
      met: null,
      details: { floor: others(floor), againstFloor: stormy.p99 / least.p99 },
    },
    {
      case: ADMITTED(count),
      figure: `${num(sum('admittedPoints'))} points in ${num(seconds, 1)} s (${num(sum('refused'))} of ${num(sum('sent'))} requests refused 429); ${num(sum('admittedChanges'))} membership changes`,
      ceiling: `budget ${num(allowed)} points (${BUDGET.capacity} per flood + ${BUDGET.rate}/s); ${num(changesAllowed)} changes`,
      ratio: admittedRatio,
      target: '≤ 1.2',
      met: admittedRatio <= 1.2 && sum('admittedChanges') <= 1.2 * changesAllowed,
      details: { floods: samples.floods, budget: BUDGET, membership: MEMBERSHIP, offeredPointsPerSec: 10 * BUDGET.rate },
    },
  ];
}

/** The servers' CPU the flood added, per request it sent, beside the CPU per steady request (the flood's rate assumed even). */
function floodCpu(samples: Samples) {
  const floodSec = samples.floods.reduce((sum, flood) => sum + flood.seconds, 0);
  const floodRequests =
    (samples.floods.reduce((sum, flood) => sum + flood.sent, 0) * (samples.flooded.length * samples.windowSec)) / floodSec;
  return {
    ...samples.cpuMs,
    perFloodRequestMs: (samples.cpuMs.flooded - samples.cpuMs.quiet) / floodRequests,
    // The probe's back-to-back status reads are requests too.
    perSteadyRequestMs:
      samples.cpuMs.quiet /
      Math.max(
        1,
        samples.quiet.reduce((sum, one) => sum + one.okMs.length + one.probeMs.length, 0),
      ),
  };
}
