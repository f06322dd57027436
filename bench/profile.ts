// First: every server the bench starts runs in production mode (see production-mode.ts).
import './production-mode.js';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, type Cluster } from './cluster.js';
import { httpLoad } from './load.js';
import { FLOOD_ENVIRONMENT, floodLoad } from './profile-flood.js';
import { summarise, type CpuProfile } from './profile-summary.js';
import { body, createWorkload, SIGNAL, SIGNALS, type Workload } from './workload.js';

/**
 * `npm run bench:profile [-- --seconds N] [--only batched|single]`: a CPU profile (`node --cpu-prof`)
 * of a real server process (bench/server-process.ts, NODE_ENV=production like every bench server)
 * under each signal load of the bench, summarised as the top functions by self time and the share
 * of each package, counting only the samples taken while the load ran (not start-up):
 * - batched: `signals` with 1000 inputs per call from 4 callers (case 2);
 * - single: `signal` one per request from 32 connections (case 1);
 * - flood: one user token at ten times its budget beside a steady load of others (case 22).
 * 5% of the users are LEFT. Each raw profile is kept in bench/results/ for a viewer (Chrome
 * DevTools, speedscope).
 */
const seconds = process.argv.includes('--seconds') ? Number(process.argv[process.argv.indexOf('--seconds') + 1]) : 20;
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const BATCH = 1000;

interface Load {
  name: 'batched' | 'single' | 'flood';
  describe: string;
  connections: number;
  bodies(workload: Workload): string[];
}

const LOADS: Load[] = [
  {
    name: 'batched',
    describe: `signals, ${BATCH} per call, 4 callers`,
    connections: 4,
    bodies: (workload) =>
      Array.from({ length: 16 }, () => body(SIGNALS, { inputs: Array.from({ length: BATCH }, () => workload.nextSignal()) })),
  },
  {
    name: 'single',
    describe: 'signal, one per request, 32 connections',
    connections: 32,
    bodies: (workload) => Array.from({ length: 5_000 }, () => body(SIGNAL, { input: workload.nextSignal() })),
  },
  { name: 'flood', describe: 'one user token at 10× its budget beside a steady load (fair share)', connections: 0, bodies: () => [] },
];

const cluster = await startCluster();
try {
  for (const load of LOADS.filter((candidate) => only === undefined || candidate.name === only)) {
    process.stdout.write(`== ${load.name}: ${load.describe}\n${await profile(cluster, load)}\n`);
    await cluster.endCase();
  }
} finally {
  await cluster.stop();
}

async function profile(cluster: Cluster, load: Load): Promise<string> {
  const folder = await mkdtemp(path.join(tmpdir(), 'cl-profile-'));
  try {
    const url = await cluster.freshDatabase();
    const db = await cluster.sqlClient(url);
    const workload = createWorkload({ users: 10_000, items: 5_000, zipfExponent: 1.1, leftShare: 0.05, cohortShare: 0.2 });
    // LEFT before the process starts: it restores them into its gate at start.
    await db.query('SELECT leave_community_layer(u::u64) FROM unnest($1::text[]) AS u', [workload.leftUserIds]);
    const environment = load.name === 'flood' ? FLOOD_ENVIRONMENT : {};
    const server = await cluster.startProcesses(url, 1, environment, ['--cpu-prof', '--cpu-prof-dir', folder]);
    const bodies = load.bodies(workload);
    const run = (durationSec: number) =>
      load.name === 'flood'
        ? floodLoad(cluster, server.urls[0]!, workload, durationSec)
        : httpLoad({ url: server.urls[0]!, token: cluster.token, bodies, connections: load.connections, durationSec });
    await run(3);
    const from = process.hrtime.bigint() / 1000n;
    const sample = await run(seconds);
    const to = process.hrtime.bigint() / 1000n;
    await server.stop();
    const file = (await readdir(folder)).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('the server wrote no profile');
    const results = fileURLToPath(new URL('./results/', import.meta.url));
    await mkdir(results, { recursive: true });
    const kept = path.join(results, `profile-${load.name}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
    await copyFile(path.join(folder, file), kept);
    const cpu = JSON.parse(await readFile(kept, 'utf8')) as CpuProfile;
    const header = `${sample.requests} requests in ${sample.durationSec.toFixed(1)} s (${sample.failed} failed); profile ${kept}\n\n`;
    return header + summarise(cpu, Number(from), Number(to), sample.requests);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
