import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import type { HttpLoadOptions, LoadSample } from './load.js';
import { EVENT_ID_SLOT } from './workload.js';

// Runs in a child process (see load.ts): the load generator must not share the event loop of the
// servers it measures.
process.once('message', (options: HttpLoadOptions) => {
  let next = 0;
  let failed = 0;
  let firstFailure: string | null = null;
  const latenciesMs: number[] = [];
  const instance = autocannon(
    {
      url: options.url,
      method: 'POST',
      connections: options.connections,
      duration: options.durationSec,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token}` },
      requests: [
        {
          setupRequest: (request) => {
            const body = options.bodies[next++ % options.bodies.length]!;
            return { ...request, body: options.freshEventIds ? body.replaceAll(EVENT_ID_SLOT, () => randomUUID()) : body };
          },
          onResponse: (status, body) => {
            if (status === 200 && !body.includes('"errors"')) return;
            failed++;
            firstFailure ??= `${status} ${body.slice(0, 300)}`;
          },
        },
      ],
    },
    (error, result) => {
      if (error) throw error;
      const sample: LoadSample = {
        requests: latenciesMs.length - failed,
        failed: failed + result.errors,
        firstFailure,
        durationSec: result.duration,
        latenciesMs,
      };
      process.send!(sample, () => process.disconnect());
    },
  );
  instance.on('response', (_client, _status, _bytes, responseTimeMs) => latenciesMs.push(responseTimeMs));
});
