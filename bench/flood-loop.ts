import http from 'node:http';
import type { FloodOptions, FloodResult } from './flood.js';

const SIGNAL = 'mutation ($input: SignalInput!) { signal(input: $input) { signalId } }';
const SIGNALS = 'mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId } }';
/** What `leaveCommunityLayer { status }` costs: 10 for the change, 1 for the membership (docs/operations.md). */
const CHANGE_POINTS = 11;

/**
 * One credential flooding the service, open loop, round robin over `urls`: each tenth of a second,
 * half its points in single signals, 40% in batches, 10% in leaves and rejoins (or single signals
 * only). Runs in the child of flood.ts.
 */
function runFlood(options: FloodOptions): { stop(): Promise<FloodResult> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const result: FloodResult = { seconds: 0, sent: 0, admittedPoints: 0, admittedChanges: 0, refused: 0, other: 0 };
  const perTick = options.pointsPerSec / 10;
  let flips = 0;
  const signal = (i: number) => ({ userId: options.userId, itemId: `flood-${i % 100}`, kind: 'VIEW' });
  const single = { points: 1, change: false, body: (i: number) => JSON.stringify({ query: SIGNAL, variables: { input: signal(i) } }) };
  const kinds = options.singlesOnly
    ? Array.from({ length: Math.round(perTick) }, () => single)
    : [
        ...Array.from({ length: Math.round(perTick * 0.5) }, () => ({
          points: 1,
          change: false,
          body: (i: number) => JSON.stringify({ query: SIGNAL, variables: { input: signal(i) } }),
        })),
        ...Array.from({ length: Math.max(1, Math.round((perTick * 0.4) / options.batchSize)) }, () => ({
          points: options.batchSize,
          change: false,
          body: (i: number) =>
            JSON.stringify({ query: SIGNALS, variables: { inputs: Array.from({ length: options.batchSize }, (_, k) => signal(i + k)) } }),
        })),
        ...Array.from({ length: Math.max(1, Math.round((perTick * 0.1) / CHANGE_POINTS)) }, () => ({
          points: CHANGE_POINTS,
          change: true,
          // Leave, rejoin, leave…: each one a change.
          body: () =>
            JSON.stringify({ query: `mutation { ${flips++ % 2 === 0 ? 'leaveCommunityLayer' : 'rejoinCommunityLayer'} { status } }` }),
        })),
      ];
  const inFlight = new Set<Promise<void>>();
  const send = (url: string, kind: (typeof kinds)[number], i: number) => {
    const body = kind.body(i);
    const sent = new Promise<void>((resolve) => {
      const request = http.request(url, {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${options.token}`,
          'content-length': Buffer.byteLength(body),
        },
      });
      request.once('error', () => {
        result.other++;
        resolve();
      });
      request.once('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () => {
          const answer = JSON.parse(Buffer.concat(chunks).toString()) as {
            errors?: unknown[];
            extensions?: { cost?: { actualQueryCost?: number } };
          };
          if (response.statusCode === 200 && !answer.errors) {
            // What the server charged (a leave or rejoin costs more than its objects), not what the flood guessed.
            result.admittedPoints += answer.extensions?.cost?.actualQueryCost ?? kind.points;
            if (kind.change) result.admittedChanges++;
          } else if (response.statusCode === 429) result.refused++;
          else result.other++;
          resolve();
        });
      });
      request.end(body);
    });
    inFlight.add(sent);
    void sent.then(() => inFlight.delete(sent));
  };
  const started = performance.now();
  let n = 0;
  const timer = setInterval(() => {
    // Open loop, but bounded: a server that stops answering is not sent an ever-growing backlog.
    if (inFlight.size > 256) return;
    for (const kind of kinds) {
      send(options.urls[n % options.urls.length]!, kind, n);
      n++;
      result.sent++;
    }
  }, 100);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      agent.destroy();
      result.seconds = (performance.now() - started) / 1000;
      return result;
    },
  };
}

// The child's protocol: options in, then 'stop', then the result out.
process.once('message', (options: FloodOptions) => {
  const flood = runFlood(options);
  process.once('message', () => void flood.stop().then((result) => process.send!(result, () => process.exit(0))));
  process.send!('started');
});
