import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  command,
  debField,
  dependencyNames,
  downloadPackages,
  installed,
  libraryFolders,
  missingLibraries,
  onPath,
  withLibraries,
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
export const PGBOUNCER_CACHE = fileURLToPath(new URL('../node_modules/.cache/pgbouncer', import.meta.url));
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
      `pgbouncer is not installed (looked on PATH and for ${SYSTEM.join(', ')}) and could not be fetched ` +
        `into ${PGBOUNCER_CACHE} (${error instanceof Error ? error.message : String(error)}). npm test needs it: ` +
        'the boundary, cluster-cache and transaction-pooling tests also run through a real PgBouncer in ' +
        'transaction mode. Install it with `sudo apt-get install pgbouncer` (Debian/Ubuntu), then run npm test again.',
    );
  }
}

interface Manifest {
  /** Relative to the cached folder, as are the library folders. */
  file: string;
  libraryPath: string[];
  version: string;
  /** The library packages fetched beside it. */
  libraries: string[];
}

/** What an earlier fetch left in `cache`, or null. */
export async function readCache(cache: string): Promise<PgBouncerBinary | null> {
  const text = await readFile(path.join(cache, 'current', MANIFEST), 'utf8').catch(() => null);
  if (!text) return null;
  const binary = located(path.join(cache, 'current'), JSON.parse(text) as Manifest);
  return existsSync(binary.file) ? binary : null;
}

function located(folder: string, manifest: Manifest): PgBouncerBinary {
  const inFolder = (relative: string) => path.join(folder, relative);
  return { file: inFolder(manifest.file), libraryPath: manifest.libraryPath.map(inFolder) };
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
  let manifest: Manifest;
  try {
    manifest = await unpack(staging);
    await writeFile(path.join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    // A copy that another run placed meanwhile stays (the rename then fails); a broken one goes.
    if (!(await readCache(cache))) await rm(path.join(cache, 'current'), { recursive: true, force: true });
    await rename(staging, path.join(cache, 'current'));
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    const other = await readCache(cache);
    if (other) return { binary: other, note: `using the copy another run fetched into ${cache}` };
    throw error;
  }
  const also = manifest.libraries.length ? ` with ${manifest.libraries.join(', ')}` : '';
  return {
    binary: located(path.join(cache, 'current'), manifest),
    note: `fetched Debian's pgbouncer ${manifest.version}${also} into ${cache} (reused from now on)`,
  };
}

/** Downloads and unpacks the package (and missing libraries) into `staging`; checks that it runs. */
async function unpack(staging: string): Promise<Manifest> {
  const root = path.join(staging, 'root');
  const [deb] = await downloadPackages(['pgbouncer'], path.join(staging, 'debs'));
  if (!deb) throw new Error('apt-get download pgbouncer gave no package');
  await command('dpkg-deb', ['-x', deb, root]);
  const file = 'root/usr/sbin/pgbouncer';
  const inStaging = (dirs: string[]) => dirs.map((dir) => path.join(staging, dir));
  const libraries: string[] = [];
  let libraryPath: string[] = [];
  if ((await missingLibraries(path.join(staging, file), [])).length) {
    for (const name of dependencyNames(await debField(deb, 'Depends'))) {
      if (name.startsWith('lib') && !(await installed(name))) libraries.push(name);
    }
    const debs = libraries.length ? await downloadPackages(libraries, path.join(staging, 'libs')) : [];
    for (const lib of debs) await command('dpkg-deb', ['-x', lib, root]);
    libraryPath = (await libraryFolders(root)).map((dir) => path.relative(staging, dir));
    const still = await missingLibraries(path.join(staging, file), inStaging(libraryPath));
    if (still.length) throw new Error(`it needs ${still.join(', ')}: neither this machine nor its Depends have it`);
  }
  await command(path.join(staging, file), ['--version'], { env: withLibraries(inStaging(libraryPath)) });
  const version = await debField(deb, 'Version');
  for (const downloads of ['debs', 'libs']) await rm(path.join(staging, downloads), { recursive: true, force: true });
  return { file, libraryPath, version, libraries };
}
