import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A checkout as a newcomer has it after `npm install`, inside a folder only its owner may enter
 * (mkdtemp makes it mode 700). node_modules is hard-linked, not symlinked: Node resolves symlinks
 * to their real path, which would lead back out of the root-only folder.
 */
export async function rootOnlyCheckout(): Promise<{ folder: string; app: string }> {
  const folder = await mkdtemp(path.join(tmpdir(), 'community-layer-checkout-'));
  const app = path.join(folder, 'app');
  await mkdir(app);
  for (const entry of [
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'scripts',
    'src',
    'tooling',
    'examples',
    'packages',
    'trusted-documents.json',
  ]) {
    await cp(path.join(ROOT, entry), path.join(app, entry), { recursive: true });
  }
  await promisify(execFile)('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(app, 'node_modules')]);
  return { folder, app };
}

/** The environment a newcomer's shell would have: none of the test run's settings. */
export function newcomerEnvironment(extra: Record<string, string>): Record<string, string> {
  const environment = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined && !/^(npm_|VITEST|DATABASE_URL$|TEST_DATABASE_URL$|EMBEDDED_PG_DIR$|NODE_ENV$)/.test(entry[0]),
    ),
  );
  return { ...environment, npm_config_update_notifier: 'false', ...extra };
}

/** What /proc says about a process: its user, process group and executable. */
export async function processInfo(pid: number): Promise<{ uid: number; pgrp: number; exe: string }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): state, ppid, pgrp, …
  const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const uid = Number(/^Uid:\s+(\d+)/m.exec(status)![1]);
  return { uid, pgrp, exe: await readlink(`/proc/${pid}/exe`) };
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
