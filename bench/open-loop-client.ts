import type { OpenLoopOptions, OpenLoopSample } from './open-loop.js';

// Runs in a child process (see open-loop.ts): the load generator must not share the event loop,
// nor the memory, of the server it measures.
process.once('message', async (options: OpenLoopOptions) => {
  const sample: OpenLoopSample = { sent: 0, acknowledgedIds: [], okMs: [], shedMs: [], failures: 0, firstFailure: null, probeMs: [], probeFailures: 0 };
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${options.token}` };
  const deadline = performance.now() + options.durationSec * 1000;

  const send = async (body: string) => {
    const started = performance.now();
    try {
      const response = await fetch(options.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(options.timeoutMs) });
      const text = await response.text();
      const elapsed = performance.now() - started;
      if (response.status === 200 && !text.includes('"errors"')) {
        sample.okMs.push(elapsed);
        for (const match of text.matchAll(/"signalId":"(\d+)"/g)) sample.acknowledgedIds.push(match[1]!);
      } else if (response.status === 503 && response.headers.get('retry-after') && text.includes('OVERLOADED')) {
        sample.shedMs.push(elapsed);
      } else {
        sample.failures++;
        sample.firstFailure ??= `${response.status} ${text.slice(0, 200)}`;
      }
    } catch (error) {
      sample.failures++;
      sample.firstFailure ??= String(error);
    }
  };

  // Open loop: requests leave on schedule whether or not earlier ones were answered, as real
  // clients do; a closed loop would slow down with the server and never overload it.
  const inFlight: Promise<void>[] = [];
  const schedule = async () => {
    if (options.ratePerSec === 0) return;
    const interval = 1000 / options.ratePerSec;
    const started = performance.now();
    for (let i = 0; performance.now() < deadline; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      inFlight.push(send(options.bodies[i % options.bodies.length]!));
      sample.sent++;
    }
  };
  // A status reader beside the load: what other users feel.
  const probe = async () => {
    while (performance.now() < deadline) {
      const started = performance.now();
      const response = await fetch(options.url, { method: 'POST', headers, body: options.probeBody });
      const text = await response.text();
      sample.probeMs.push(performance.now() - started);
      // A refused probe would look fast: count it apart, so the latency is only of answers.
      if (response.status !== 200 || text.includes('"errors"')) sample.probeFailures++;
    }
  };
  await Promise.all([schedule(), probe()]);
  await Promise.all(inFlight);
  process.send!(sample, () => process.disconnect());
});
