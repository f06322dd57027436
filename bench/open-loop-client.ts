import http from 'node:http';
import type { OpenLoopOptions, OpenLoopSample } from './open-loop.js';

// Runs in a child process (see open-loop.ts): the load generator must not share the event loop,
// nor the memory, of the server it measures.
process.once('message', async (options: OpenLoopOptions) => {
  const sample: OpenLoopSample = {
    sent: 0,
    acknowledgedIds: [],
    okMs: [],
    shedMs: [],
    failures: 0,
    firstFailure: null,
    probeMs: [],
    probeFailures: 0,
  };
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${options.token}` };
  const deadline = performance.now() + options.durationSec * 1000;

  // node:http with keep-alive, not fetch: at five times capacity fetch's own cost per request made
  // this client the bottleneck, and requests waited here instead of reaching the server.
  const agent = new http.Agent({ keepAlive: true });
  const post = (body: string, timeoutMs?: number) =>
    new Promise<{ status: number; retryAfter: string | undefined; text: string }>((resolve, reject) => {
      const request = http.request(options.url, {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        ...(timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
      });
      request.once('error', reject);
      request.once('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('error', reject);
        response.once('end', () =>
          resolve({ status: response.statusCode!, retryAfter: response.headers['retry-after'], text: Buffer.concat(chunks).toString() }),
        );
      });
      request.end(body);
    });

  const send = async (body: string) => {
    const started = performance.now();
    try {
      const response = await post(body, options.timeoutMs);
      const elapsed = performance.now() - started;
      if (response.status === 200 && !response.text.includes('"errors"')) {
        sample.okMs.push(elapsed);
        for (const match of response.text.matchAll(/"signalId":"(\d+)"/g)) sample.acknowledgedIds.push(match[1]!);
      } else if (response.status === 503 && response.retryAfter && response.text.includes('OVERLOADED')) {
        sample.shedMs.push(elapsed);
      } else {
        sample.failures++;
        sample.firstFailure ??= `${response.status} ${response.text.slice(0, 200)}`;
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
    while (options.probeBody !== undefined && performance.now() < deadline) {
      const started = performance.now();
      const response = await post(options.probeBody);
      sample.probeMs.push(performance.now() - started);
      // A refused probe would look fast: count it apart, so the latency is only of answers.
      if (response.status !== 200 || response.text.includes('"errors"')) sample.probeFailures++;
    }
  };
  await Promise.all([schedule(), probe()]);
  await Promise.all(inFlight);
  process.send!(sample, () => process.disconnect());
});
