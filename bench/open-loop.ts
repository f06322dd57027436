import { fork } from 'node:child_process';

export interface OpenLoopOptions {
  url: string;
  token: string;
  bodies: string[];
  /** Requests started per second, answered or not; 0: only the probe runs. */
  ratePerSec: number;
  durationSec: number;
  timeoutMs: number;
  /** Sent back to back on one connection beside the load; none: the load alone. */
  probeBody?: string;
}

export interface OpenLoopSample {
  sent: number;
  acknowledgedIds: string[];
  okMs: number[];
  /** Latencies of 503 OVERLOADED answers. */
  shedMs: number[];
  failures: number;
  firstFailure: string | null;
  probeMs: number[];
  /** Probes answered with anything but data. */
  probeFailures: number;
}

/** A fixed-rate load in a child process, with a probe beside it. */
export function openLoop(options: OpenLoopOptions): Promise<OpenLoopSample> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL('./open-loop-client.ts', import.meta.url), [], { serialization: 'advanced' });
    let sample: OpenLoopSample | null = null;
    child.once('message', (message) => (sample = message as OpenLoopSample));
    child.once('error', reject);
    child.once('exit', (code) => (sample ? resolve(sample) : reject(new Error(`open-loop client exited with ${code} and no result`))));
    child.send(options);
  });
}
