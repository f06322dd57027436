import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Command } from '../tooling/command.js';
import { WATCHDOG_NAME } from '../tooling/postgres/embedded/watchdog.js';
import { postGraphQL } from '../tooling/graphql-client.js';
import { spawnServerProcess, type ServerProcess } from '../tooling/server-process.js';
import { isRunning, newcomerEnvironment } from './support/checkout.js';
import { TEST_SECRET, eventually, token } from './support/harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Embedded PostgreSQL's first start (initdb) on a loaded machine may take a while. */
const START_MS = 120_000;

let folder: string;
/** This file's own data folder (never the checkout's .data/): the file runs beside the others. */
let dataDir: string;
const started: Command[] = [];

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'community-layer-exits-'));
  // As root the embedded server runs as "postgres", which must be able to enter this folder.
  await chmod(folder, 0o755);
  dataDir = path.join(folder, 'postgres');
});

// After a failed test: nothing of it may outlive it (the next test would wait for it, then be refused).
afterEach(async () => {
  for (const command of started.splice(0)) await command.stop('SIGKILL');
  for (const { pid } of await postmasters()) process.kill(pid, 'SIGQUIT');
  await eventually(async () => (await postmasters()).length === 0, 30_000);
});

afterAll(() => rm(folder, { recursive: true, force: true }));

/** `npm start` as a newcomer runs it (development, no DATABASE_URL), on this file's data folder. */
function environment(): Record<string, string> {
  return newcomerEnvironment({ NODE_ENV: 'development', AUTH_JWT_SECRET: TEST_SECRET, EMBEDDED_PG_DIR: dataDir, LOG_LEVEL: 'info' });
}

async function start(nodeOptions: string[] = []): Promise<ServerProcess> {
  const command = { file: process.execPath, args: [...nodeOptions, '--import', 'tsx', 'src/main.ts'], cwd: ROOT, env: environment() };
  const server = await spawnServerProcess({
    command,
    detached: true,
    environment: {},
    echo: (t) => process.env.ECHO_SERVER && process.stderr.write(t),
  });
  started.push(server);
  await server.ready(START_MS);
  return server;
}

async function serves(server: ServerProcess): Promise<void> {
  const response = await postGraphQL(server.url, `{ communityLayerStatus(userId: "42") { status } }`, {}, await token('42'));
  expect(response).toMatchObject({ status: 200, data: { communityLayerStatus: { status: 'ACTIVE' } } });
}

/**
 * The postmasters on this file's data folder with their parents, as `pgrep -f <data folder>` finds
 * them (its other processes rename themselves "postgres: …"), read from /proc (no procps needed).
 */
async function postmasters(): Promise<Array<{ pid: number; parent: number }>> {
  const found: Array<{ pid: number; parent: number }> = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = (await readFile(`/proc/${name}/cmdline`, 'utf8')).split('\0');
      if (!args.some((arg) => arg === dataDir)) continue;
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      found.push({ pid: Number(name), parent: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) });
    } catch {
      // Gone meanwhile.
    }
  }
  // A child the postmaster just forked carries its command line until it names itself.
  return found.filter(({ parent }) => !found.some(({ pid }) => pid === parent));
}

/** The watchdogs of postmaster `pid` (tooling/postgres/embedded/watchdog.ts). */
async function watchdogs(postmaster: number): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const args = await readFile(`/proc/${name}/cmdline`, 'utf8').then(
      (text) => text.split('\0'),
      () => [] as string[],
    );
    if (args.includes(WATCHDOG_NAME) && args.includes(String(postmaster))) found.push(Number(name));
  }
  return found;
}

/** Gone, or a zombie that init has yet to reap (kill(pid, 0) still succeeds on those). */
async function exited(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat === null || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/** Serves, on the one PostgreSQL left on the folder, its own; stopped, nothing is left. */
async function servesAloneThenStops(server: ServerProcess): Promise<void> {
  await serves(server);
  expect(await postmasters()).toEqual([{ pid: expect.any(Number), parent: server.child.pid }]);
  expect(await server.stop('SIGTERM')).toBe(0);
  expect(await postmasters()).toEqual([]);
}

describe('every exit of `npm start` stops its embedded PostgreSQL', () => {
  it('stdout closed after one line (`npm start | head -n 1`, npm gone at once): the next start serves, and nothing of the first is left', async () => {
    // npm dies of the closed pipe and leaves the server behind, writing into it: so does `{ … & }`.
    const script = '{ "$0" --import tsx src/main.ts 2>/dev/null & echo "first: $!" >&2; } | head -n 1';
    const piped = new Command('sh', ['-c', script, process.execPath], {
      cwd: ROOT,
      env: { ...environment(), PORT: '0', METRICS_PORT: '0' },
    });
    started.push(piped);
    expect(await piped.exit).toBe(0);
    const first = Number((await piped.waitFor(/first: (\d+)/))[1]);
    // The one line head passed on is the start line; everything after it met the closed pipe.
    expect(piped.text).toMatch(/community-layer \S+ \(commit \S+\) starting/);

    // At once, while the first may still be starting or stopping.
    await servesAloneThenStops(await start());
    await eventually(() => exited(first), 30_000);
  }, 300_000);

  it('after kill -9 of the server, its watchdog stops its PostgreSQL', async () => {
    const killed = await start();
    const [left] = await postmasters();
    expect(left?.parent).toBe(killed.child.pid);
    expect(await watchdogs(left!.pid)).toHaveLength(1);
    await killed.stop('SIGKILL');
    await eventually(() => exited(left!.pid), 60_000);
    expect(await postmasters()).toEqual([]);
    await eventually(async () => (await watchdogs(left!.pid)).length === 0, 10_000);
  }, 300_000);

  it('after kill -9 of the server and of its watchdog, its PostgreSQL left running is recognised and stopped by the next start, which serves', async () => {
    const killed = await start();
    const [left] = await postmasters();
    expect(left?.parent).toBe(killed.child.pid);
    for (const pid of await watchdogs(left!.pid)) process.kill(pid, 'SIGKILL');
    await killed.stop('SIGKILL');
    // PostgreSQL runs in a process group of its own: kill -9 of the server's group leaves it running.
    expect(isRunning(left!.pid)).toBe(true);

    const next = await start();
    expect(next.text).toContain(`stopping PostgreSQL ${left!.pid}, left running on ${dataDir} by a start that is gone`);
    await servesAloneThenStops(next);
    expect(await exited(left!.pid)).toBe(true);
  }, 300_000);

  it('SIGHUP (the terminal closed) drains, stops PostgreSQL and exits 0', async () => {
    const server = await start();
    await serves(server);
    expect(await server.stop('SIGHUP')).toBe(0);
    expect(await postmasters()).toEqual([]);
  }, 300_000);

  it('an uncaught error stops PostgreSQL and exits 1', async () => {
    // A real uncaught exception in the server's own process, thrown when it gets SIGUSR2.
    const planted = 'data:text/javascript,process.on("SIGUSR2", () => { throw new Error("planted failure") })';
    const server = await start(['--import', planted]);
    await serves(server);
    expect(await server.stop('SIGUSR2')).toBe(1);
    expect(server.text).toContain('uncaught error');
    expect(await postmasters()).toEqual([]);
  }, 300_000);
});
