import type { Case, Row } from '../case.js';
import { ms, num } from '../format.js';
import { httpLoad } from '../load.js';
import type { OpenLoopSample } from '../open-loop.js';

// Case 22's CPU figure: the server's CPU per request of the steady load, limits on against FAIR_SHARE=false.

export type Steady = (target: string, durationSec: number, probe?: boolean) => Promise<OpenLoopSample>;
type Arm = { ms: number; requests: number };
export type Cpu = { on: Arm; off: Arm; offAgain: Arm; rounds: number; windowSec: number };

/**
 * The steady load against three processes at once, in rounds: one with limits on, two with them
 * off. Measured one after the other, two identical processes differed by up to 30% in CPU per
 * request (at 100 requests a second a request's CPU is mostly cold caches, and what else ran on the
 * two cores then); measured side by side, each window falls on all three alike. The second
 * process with limits off is the control: its ratio to the first is the noise floor of the figure.
 */
export async function cpuPerRequest(
  cluster: Parameters<Case['run']>[0],
  url: string,
  environment: Record<string, string>,
  steady: Steady,
  sizes: Parameters<Case['run']>[1],
  bodies: string[],
): Promise<Cpu> {
  const off = { ...environment, FAIR_SHARE: 'false' };
  const arms = {
    on: await cluster.startProcesses(url, 1, environment),
    off: await cluster.startProcesses(url, 1, off),
    offAgain: await cluster.startProcesses(url, 1, off),
  };
  const names = ['on', 'off', 'offAgain'] as const;
  try {
    // Closed loop first, so that each process's code is optimised before its CPU counts.
    for (const name of names)
      await httpLoad({ url: arms[name].urls[0]!, token: cluster.token, bodies, connections: 8, durationSec: sizes.warmupSec });
    const spent = { on: { ms: 0, requests: 0 }, off: { ms: 0, requests: 0 }, offAgain: { ms: 0, requests: 0 } };
    // Eight rounds, a minute in all: one window's ratio moves ±10% on its own, the sum of four ±3%.
    const rounds = Math.max(8, 2 * sizes.rounds);
    const windowSec = (4 * sizes.durationSec) / rounds;
    for (let round = 0; round < rounds; round++) {
      const before = await Promise.all(names.map((name) => arms[name].cpuMs(0)));
      // No probe: its back-to-back reads would make each arm's load as large as its latency allows.
      const samples = await Promise.all(names.map((name) => steady(arms[name].urls[0]!, windowSec, false)));
      const after = await Promise.all(names.map((name) => arms[name].cpuMs(0)));
      names.forEach((name, i) => {
        spent[name].ms += after[i]! - before[i]!;
        spent[name].requests += samples[i]!.okMs.length;
      });
    }
    return { ...spent, rounds, windowSec };
  } finally {
    await Promise.all(names.map((name) => arms[name].stop()));
  }
}

/** `label`'s row: CPU per request with limits on against off, the two off arms' ratio as the noise floor. */
export function cpuRow(label: string, cpu: Cpu, steadyPerSec: number): Row {
  const per = (arm: Arm) => arm.ms / Math.max(1, arm.requests);
  const offCpu = (cpu.off.ms + cpu.offAgain.ms) / Math.max(1, cpu.off.requests + cpu.offAgain.requests);
  const ratio = per(cpu.on) / offCpu;
  return {
    case: label,
    figure: `${ms(per(cpu.on))} per request (${num(cpu.on.requests)} requests)`,
    ceiling: `limits off ${ms(offCpu)} per request (two processes, ${num(cpu.off.requests + cpu.offAgain.requests)} requests; one against the other ${num(per(cpu.offAgain) / per(cpu.off), 3)})`,
    ratio,
    target: '≤ 1.03',
    met: ratio <= 1.03,
    details: { ...cpu, controlRatio: per(cpu.offAgain) / per(cpu.off), steadyPerSec },
  };
}
