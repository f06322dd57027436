import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  command, debField, dependencyNames, downloadPackages, installed, libraryFolders, missingLibraries, onPath, withLibraries,
} from './debian-packages.js';

/** A PgBouncer to run: the program, and where its fetched libraries are (empty: the system's do). */
export interface PgBouncerBinary {
  file: string;
  libraryPath: string[];
}

/** Something the test run needs is not on this machine: said in one paragraph, without a stack trace. */
export class MissingPrerequisite extends Error {
  override name = 'Missing test prerequisite';

  constructor(message: string) {
    super(message);
    // Vitest prints a setup error's stack; this one's cause is the machine, not a line of code.
    this.stack = `${this.name}: ${message}`;
  }
}

const SYSTEM = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'];
/** Inside the checkout (node_modules is git-ignored), so it goes with the checkout. */
export const PGBOUNCER_CACHE = fileURLToPath(new URL('../node_modules/.cache/pgbouncer/', import.meta.url));
const MANIFEST = 'pgbouncer.json';

let found: Promise<PgBouncerBinary> | undefined;

/**
 * PgBouncer ships in no npm package, so the tests take one from the machine: an installed one (on
 * PATH or in the usual folders), else the one fetched before into PGBOUNCER_CACHE, else Debian's
 * package fetched there now (one line says so). Only a machine with no way to get it refuses.
 */
export function pgbouncerBinary(): Promise<PgBouncerBinary> {
  found ??= locate();
  return found;
}

async function locate(): Promise<PgBouncerBinary> {
  const system = (await onPath('pgbouncer')) ?? SYSTEM.find((candidate) => existsSync(candidate));
  if (system) return { file: system, libraryPath: [] };
  const cached = await readCache(PGBOUNCER_CACHE);
  if (cached) return cached;
  try {
    const { binary, note } = await fetchPgBouncer(PGBOUNCER_CACHE);
    console.log(`pgbouncer: none installed; ${note}`);
    return binary;
  } catch (error) {
    throw new MissingPrerequisite(
      `pgbouncer is not installed (looked on PATH and for ${SYSTEM.join(', ')}) and could not be fetched into ` +
        `${PGBOUNCER_CACHE} (${error instanceof Error ? error.message : String(error)}). npm test needs it: the boundary, ` +
        'cluster-cache and transaction-pooling tests also run through a real PgBouncer in transaction mode. Install it with ' +
        '`sudo apt-get install pgbouncer` (Debian/Ubuntu), then run npm test again.',
    );
  }
}

/** What an earlier fetch left in `cache`, or null. */
export async function readCache(cache: string): Promise<PgBouncerBinary | null> {
  const text = await readFile(path.join(cache, 'current', MANIFEST), 'utf8').catch(() => null);
  if (!text) return null;
  const { file, libraryPath } = JSON.parse(text) as PgBouncerBinary;
  const binary = { file: path.join(cache, 'current', file), libraryPath: libraryPath.map((dir) => path.join(cache, 'current', dir)) };
  return existsSync(binary.file) ? binary : null;
}

/**
 * Debian's pgbouncer package unpacked into `cache`/current (apt-get download and dpkg-deb -x: no
 * root needed, nothing installed), with the libraries it needs that the machine lacks (libevent,
 * c-ares, …) beside it. Made in a folder of its own and renamed into place once it runs.
 */
export async function fetchPgBouncer(cache: string): Promise<{ binary: PgBouncerBinary; note: string }> {
  for (const tool of ['apt-get', 'dpkg-deb', 'dpkg-query', 'ldd']) {
    if (!(await onPath(tool))) throw new Error(`no ${tool} on this machine`);
  }
  await mkdir(cache, { recursive: true });
  const staging = await mkdtemp(path.join(cache, '.fetching-'));
  try {
    const root = path.join(staging, 'root');
    const [deb] = await downloadPackages(['pgbouncer'], path.join(staging, 'debs'));
    if (!deb) throw new Error('apt-get download pgbouncer gave no package');
    await command('dpkg-deb', ['-x', deb, root]);
    const relative = { file: 'root/usr/sbin/pgbouncer', libraryPath: [] as string[] };
    const libraries: string[] = [];
    if ((await missingLibraries(path.join(staging, relative.file), [])).length) {
      for (const name of dependencyNames(await debField(deb, 'Depends'))) {
        if (name.startsWith('lib') && !(await installed(name))) libraries.push(name);
      }
      for (const lib of await downloadPackages(libraries, path.join(staging, 'libs'))) await command('dpkg-deb', ['-x', lib, root]);
      relative.libraryPath = (await libraryFolders(root)).map((dir) => path.relative(staging, dir));
      const still = await missingLibraries(path.join(staging, relative.file), relative.libraryPath.map((dir) => path.join(staging, dir)));
      if (still.length) throw new Error(`its libraries ${still.join(', ')} are missing even with ${libraries.join(', ')}`);
    }
    const inStaging = relative.libraryPath.map((dir) => path.join(staging, dir));
    await command(path.join(staging, relative.file), ['--version'], { env: withLibraries(inStaging) });
    const version = await debField(deb, 'Version');
    await rm(path.join(staging, 'debs'), { recursive: true, force: true });
    await rm(path.join(staging, 'libs'), { recursive: true, force: true });
    await writeFile(path.join(staging, MANIFEST), `${JSON.stringify({ ...relative, version, libraries }, null, 2)}\n`);
    // A copy that another run placed meanwhile stays (the rename then fails); a broken one goes.
    if (!(await readCache(cache))) await rm(path.join(cache, 'current'), { recursive: true, force: true });
    await rename(staging, path.join(cache, 'current'));
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // Another run placed its copy first: use that one.
    const other = await readCache(cache);
    if (other) return { binary: other, note: `using the copy another run fetched into ${cache}` };
    throw error;
  }
  const binary = (await readCache(cache))!;
  const { version, libraries } = JSON.parse(await readFile(path.join(cache, 'current', MANIFEST), 'utf8')) as { version: string; libraries: string[] };
  const also = libraries.length ? ` with ${libraries.join(', ')}` : '';
  return { binary, note: `fetched Debian's pgbouncer ${version}${also} into ${cache} (reused from now on)` };
}
