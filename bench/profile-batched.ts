import { copyFile, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster } from './cluster.js';
import { httpLoad } from './load.js';
import { body, createWorkload, SIGNALS } from './workload.js';

/**
 * `npm run bench:profile [-- --seconds N] [--production]`: a CPU profile (`node --cpu-prof`) of one real server
 * process (bench/server-process.ts) under the batched case's load (1000 signals per call, 4
 * callers, 5% of users LEFT), summarised as the top functions by self time and the share of each
 * package, counting only the samples taken while the load ran (not start-up). The raw profile is
 * kept for a viewer (Chrome DevTools, speedscope). `--production` runs the server with
 * NODE_ENV=production, as deployed (graphql-js then skips its development-only checks).
 */
const seconds = process.argv.includes('--seconds') ? Number(process.argv[process.argv.indexOf('--seconds') + 1]) : 20;
const production = process.argv.includes('--production');
const BATCH = 1000;
const CALLERS = 4;
const TOP = 25;

const cluster = await startCluster();
const folder = await mkdtemp(path.join(tmpdir(), 'cl-profile-'));
try {
  const url = await cluster.freshDatabase();
  const db = await cluster.sqlClient(url);
  const workload = createWorkload({ users: 10_000, items: 5_000, zipfExponent: 1.1, leftShare: 0.05, cohortShare: 0.2 });
  // LEFT before the process starts: it restores them into its gate at start.
  await db.query('SELECT leave_community_layer(u::u64) FROM unnest($1::text[]) AS u', [workload.leftUserIds]);
  const server = await cluster.startProcesses(url, 1, production ? { NODE_ENV: 'production' } : {}, ['--cpu-prof', '--cpu-prof-dir', folder]);
  const bodies = Array.from({ length: 16 }, () => body(SIGNALS, { inputs: Array.from({ length: BATCH }, () => workload.nextSignal()) }));
  const load = (durationSec: number) => httpLoad({ url: server.urls[0]!, token: cluster.token, bodies, connections: CALLERS, durationSec });
  await load(3);
  const from = process.hrtime.bigint() / 1000n;
  const sample = await load(seconds);
  const to = process.hrtime.bigint() / 1000n;
  await server.stop();
  const file = (await readdir(folder)).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error('the server wrote no profile');
  const results = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(results, { recursive: true });
  const kept = path.join(results, `batched-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
  await copyFile(path.join(folder, file), kept);
  const profile = JSON.parse(await readFile(kept, 'utf8')) as CpuProfile;
  process.stdout.write(`${sample.requests} calls of ${BATCH} signals in ${sample.durationSec.toFixed(1)} s (${sample.failed} failed); profile ${kept}\n\n`);
  process.stdout.write(summarise(profile, Number(from), Number(to), sample.requests));
} finally {
  await cluster.stop();
  await rm(folder, { recursive: true, force: true });
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function and per package, from the samples between `from` and `to` (µs, the monotonic clock V8 stamps with). */
function summarise(profile: CpuProfile, from: number, to: number, calls: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const self = new Map<string, number>();
  const packages = new Map<string, number>();
  let at = profile.startTime;
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i]!;
    at += delta;
    if (at < from || at > to) return;
    const frame = byId.get(id)!;
    if (frame.functionName === '(idle)') {
      idle += delta;
      return;
    }
    total += delta;
    const key = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + delta);
    packages.set(packageOf(frame), (packages.get(packageOf(frame)) ?? 0) + delta);
  });
  const share = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  const top = (map: Map<string, number>, n: number) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, us]) => `${share(us)}  ${name}`).join('\n');
  return [
    `busy ${(total / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms; busy per call ${(total / 1000 / calls).toFixed(1)} ms`,
    '',
    'by package (self time):',
    top(packages, 15),
    '',
    `top ${TOP} functions (self time):`,
    top(self, TOP),
    '',
  ].join('\n');
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const source = url.indexOf('/src/');
  return source >= 0 ? url.slice(source + 1) : url;
}

function packageOf(frame: { functionName: string; url: string }): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const modules = frame.url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = frame.url.slice(modules + 'node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (frame.url.startsWith('node:')) return 'node:*';
  const source = frame.url.indexOf('/src/');
  return source >= 0 ? frame.url.slice(source + 1).split('/').slice(0, 2).join('/') : frame.url;
}
