import { Session, type Profiler } from 'node:inspector/promises';
import type { App } from '../src/app.js';
import type { RequestPipeline } from '../src/server/request-pipeline.js';
import { unobserved } from '../src/server/request-observer.js';
import { httpLoad, type HttpLoadOptions } from './load.js';
import { withoutPlugins } from './second-server.js';

/**
 * The source each request layer runs (the plugins src/server/request-pipeline.ts names, and the
 * request observer), and the project's other parts a request passes through. Paths are matched as
 * prefixes below the repository.
 */
const LAYER_SOURCES: Record<string, string[]> = {
  requestObserver: ['src/server/request-observer.ts'],
  singleConnectionSSE: ['src/server/sse-single-connection.ts', 'src/server/prepared-operation.ts'],
  jsonBodies: ['src/server/media-type.ts'],
  strictUtf8Body: ['src/server/utf8-body.ts'],
  csrf: ['src/server/csrf.ts'],
  trustedDocuments: ['src/server/trusted-document-params.ts', 'src/graphql/trusted-documents/'],
  inputErrorCodes: ['src/api/input-errors.ts', 'src/api/argument-paths.ts'],
  compiledExecution: ['src/graphql/compiled-execution.ts'],
  operationMetrics: ['src/server/operation-metrics.ts'],
  operationTracing: ['src/server/operation-tracing.ts'],
  signalShedding: ['src/server/shed-signals.ts'],
  bulkDecoded: ['src/server/bulk-decoded.ts'],
  operationLimits: ['src/graphql/limits/'],
  fairShare: ['src/server/fair-share.ts', 'src/server/fair-share-charge.ts', 'src/budgets/'],
  multipartSubscriptions: ['src/server/multipart-subscriptions.ts'],
};

/** Every request layer priced. */
export const REQUEST_LAYERS = Object.keys(LAYER_SOURCES);

/** The app's request layers with every priced one left out: what the transport, Yoga and the resolvers cost alone. */
export function withoutRequestLayers(pipeline: RequestPipeline): RequestPipeline {
  const plugins = withoutPlugins(
    pipeline.plugins,
    REQUEST_LAYERS.filter((name) => name !== 'requestObserver'),
  );
  return { ...pipeline, plugins, observe: unobserved, refuseEarly: undefined };
}

/** Matched in this order: a layer's files first, `src/` as a whole last. */
const PARTS: Record<string, string[]> = {
  ...LAYER_SOURCES,
  transport: ['src/server/http.ts', 'src/server/bulk-admission.ts'],
  'context and auth': ['src/server/yoga.ts', 'src/auth/', 'src/api/auth-rules.ts', 'src/api/context.ts'],
  resolvers: ['src/api/'],
  signals: ['src/signals/', 'src/membership/'],
  database: ['src/db/'],
  'other project code': ['src/'],
};

export interface LayerCosts {
  /** Server CPU µs per request of the whole app (measured without the profiler). */
  cpuUsPerRequest: number;
  /**
   * µs per request spent with each part as the innermost project frame on the stack: its own code
   * and the library code it calls (compiledExecution: the execution itself, resolvers apart).
   * `framework` is what ran with no project frame at all (Node's HTTP, Yoga, envelop, GC).
   */
  partUs: Record<string, number>;
  samples: number;
}

/**
 * What each part of a `signal` request costs, from one CPU profile of this process (where the app
 * runs; the load client is a child process) under `load`: each sample goes to the innermost project
 * frame on its stack, and each part's share of the samples is priced at the app's CPU per request.
 * One run gives every part at once, and a share of samples hardly moves with what else the machine
 * runs (leaving layers out one app at a time gave differences smaller than the run-to-run noise).
 * What envelop itself spends because a plugin has a hook is in `framework`, not in that layer.
 */
export async function layerCosts(app: Pick<App, 'url'>, load: Omit<HttpLoadOptions, 'url'>, cpuUsPerRequest: number): Promise<LayerCosts> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 250 });
    await session.post('Profiler.start');
    const sample = await httpLoad({ ...load, url: app.url });
    const { profile } = await session.post('Profiler.stop');
    if (sample.failed > 0 || sample.requests === 0)
      throw new Error(`load run: ${sample.failed} failed, ${sample.requests} ok; first failure: ${sample.firstFailure}`);
    const counts = samplesByPart(profile);
    const busy = [...counts.values()].reduce((sum, count) => sum + count, 0);
    const partUs = Object.fromEntries(
      [...counts].sort((a, b) => b[1] - a[1]).map(([part, count]) => [part, Math.round((cpuUsPerRequest * count) / busy)]),
    );
    return { cpuUsPerRequest: Math.round(cpuUsPerRequest), partUs, samples: busy };
  } finally {
    session.disconnect();
  }
}

/** Server CPU µs per successful request under `load` against `target` (an app here, or a bare server in this process). */
export async function cpuPerRequest(target: Pick<App, 'url'>, load: Omit<HttpLoadOptions, 'url'>): Promise<number> {
  const before = process.cpuUsage();
  const sample = await httpLoad({ ...load, url: target.url });
  const used = process.cpuUsage(before);
  if (sample.failed > 0 || sample.requests === 0)
    throw new Error(`load run: ${sample.failed} failed, ${sample.requests} ok; first failure: ${sample.firstFailure}`);
  return (used.user + used.system) / sample.requests;
}

/** Busy samples (not idle) per part, by the innermost project frame of each. */
function samplesByPart(profile: Profiler.Profile): Map<string, number> {
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const partOfNode = new Map<number, string | null>();
  const partOf = (id: number): string => {
    const known = partOfNode.get(id);
    if (known !== undefined) return known ?? 'framework';
    const own = partOfUrl(nodes.get(id)!.callFrame.url);
    const parent = parentOf.get(id);
    const part = own ?? (parent === undefined ? null : partOf(parent));
    partOfNode.set(id, part === 'framework' ? null : part);
    return part ?? 'framework';
  };
  const counts = new Map<string, number>();
  for (const id of profile.samples ?? []) {
    if (nodes.get(id)!.callFrame.functionName === '(idle)') continue;
    const part = partOf(id);
    counts.set(part, (counts.get(part) ?? 0) + 1);
  }
  return counts;
}

function partOfUrl(url: string): string | null {
  if (!url || url.includes('/node_modules/')) return null;
  const at = url.indexOf('/src/');
  if (at < 0) return null;
  const path = url.slice(at + 1);
  for (const [part, prefixes] of Object.entries(PARTS)) if (prefixes.some((prefix) => path.startsWith(prefix))) return part;
  return null;
}
