import type { App } from '../src/app.js';
import type { RequestLayer } from '../src/server/yoga.js';
import type { Cluster } from './cluster.js';
import { httpLoad, type HttpLoadOptions } from './load.js';

/** Every layer of a signal request that can be left out (src/server/yoga.ts, RequestLayer). */
const LAYERS: readonly RequestLayer[] = [
  'requestObserver',
  'singleConnectionSSE',
  'jsonBodies',
  'strictUtf8Body',
  'csrf',
  'trustedDocuments',
  'inputErrorCodes',
  'compiledExecution',
  'operationMetrics',
  'operationTracing',
  'signalShedding',
  'bulkDecoded',
  'operationLimits',
  'multipartSubscriptions',
];

export interface LayerCosts {
  /** Server CPU µs per request: the whole app, and the app without each layer in turn. */
  cpuUsPerRequest: { all: number; allRuns: number[]; without: Record<string, number> };
  /** What each layer costs a request: the whole app beside it minus without it (noise can make a small one negative). */
  layerUs: Record<string, number>;
}

/**
 * Server CPU per request (user + system of this process, where the apps run; the load client is a
 * child process) of the app as it is and with each request layer left out in turn, one app at a
 * time on the same database: what each layer costs a `signal` request. CPU time, unlike
 * throughput, hardly depends on what else the machine runs.
 */
export async function layerCosts(cluster: Cluster, databaseUrl: string, load: Omit<HttpLoadOptions, 'url'>, warmupSec: number): Promise<LayerCosts> {
  const measure = async (without: readonly RequestLayer[]) => {
    const app = await cluster.startApp(databaseUrl, { without });
    try {
      await httpLoad({ ...load, url: app.url, durationSec: warmupSec });
      return await cpuPerRequest(app, load);
    } finally {
      await cluster.stopApp(app);
    }
  };
  // The whole app between every two layers, each layer priced against the mean of its neighbours:
  // the machine drifts, and the JIT keeps warming across apps (this process's compiler threads count).
  const alls = [await measure([])];
  const without: Record<string, number> = {};
  const layerUs: Record<string, number> = {};
  for (const layer of LAYERS) {
    without[layer] = await measure([layer]);
    alls.push(await measure([]));
    layerUs[layer] = Math.round((alls.at(-2)! + alls.at(-1)!) / 2 - without[layer]!);
  }
  const all = alls.reduce((sum, value) => sum + value, 0) / alls.length;
  return { cpuUsPerRequest: { all: Math.round(all), allRuns: alls.map(Math.round), without: roundAll(without) }, layerUs };
}

/** Server CPU µs per successful request under `load` against `target` (an app here, or a bare server in this process). */
export async function cpuPerRequest(target: Pick<App, 'url'>, load: Omit<HttpLoadOptions, 'url'>): Promise<number> {
  const before = process.cpuUsage();
  const sample = await httpLoad({ ...load, url: target.url });
  const used = process.cpuUsage(before);
  if (sample.failed > 0 || sample.requests === 0) throw new Error(`load run: ${sample.failed} failed, ${sample.requests} ok; first failure: ${sample.firstFailure}`);
  return (used.user + used.system) / sample.requests;
}

function roundAll(values: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Math.round(value)]));
}
