import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../src/util/project-root.js';

/**
 * Prometheus' `promtool`, from Debian's `prometheus` package unpacked into .cache/prometheus/
 * (git-ignored): `apt-get download` and `dpkg-deb -x`, never installed, so no Prometheus server is
 * set up or started. Fetched once, when missing; two runs fetching at once each unpack into a
 * folder of their own and the first rename wins.
 */
const CACHE = path.join(projectRoot(), '.cache', 'prometheus');
const BINARY = path.join(CACHE, 'usr', 'bin', 'promtool');
const run = promisify(execFile);

export async function promtoolPath(): Promise<string> {
  if (existsSync(BINARY)) return BINARY;
  await mkdir(path.dirname(CACHE), { recursive: true });
  const work = await mkdtemp(`${CACHE}.fetching-`);
  try {
    await download(work);
    const [deb] = (await readdir(work)).filter((name) => name.endsWith('.deb'));
    if (!deb) throw new Error('apt-get download prometheus left no .deb');
    await run('dpkg-deb', ['-x', path.join(work, deb), path.join(work, 'root')]);
    await rename(path.join(work, 'root'), CACHE).catch((error: NodeJS.ErrnoException) => {
      if (!existsSync(BINARY)) throw error;
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return BINARY;
}

/** Without package lists (a fresh machine), `apt-get update` first. */
async function download(folder: string): Promise<void> {
  try {
    await run('apt-get', ['download', '-qq', 'prometheus'], { cwd: folder });
  } catch {
    await run('apt-get', ['update', '-qq']);
    await run('apt-get', ['download', '-qq', 'prometheus'], { cwd: folder });
  }
}

/** Runs promtool with `args`, `input` on its stdin; its exit code and output, whatever the code. */
export async function promtool(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const binary = await promtoolPath();
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}
