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
  withLibraries,
} from './debian-packages.js';

/** Debian's client programs of one major, and the environment that finds their libraries. */
export interface PostgresClient {
  createdb: string;
  pgDump: string;
  pgRestore: string;
  env: NodeJS.ProcessEnv;
}

/** Inside the checkout (node_modules is git-ignored), so it goes with the checkout. */
const CACHE = fileURLToPath(new URL('../node_modules/.cache/postgresql-client', import.meta.url));
const MANIFEST = 'client.json';

interface Manifest {
  bin: string;
  libraryPath: string[];
  version: string;
}

/**
 * The embedded PostgreSQL ships no pg_dump, and an installed one may be of another major (pg_dump
 * refuses a newer server). So Debian's postgresql-client-`major` is fetched once into the cache
 * (apt-get download and dpkg-deb -x: nothing installed, root not needed), with the libraries it
 * needs that the machine lacks (libpq5 and what that needs) beside it.
 */
export async function postgresClient(major: number): Promise<PostgresClient> {
  const current = path.join(CACHE, String(major));
  let manifest = await readManifest(current);
  if (!manifest) {
    await mkdir(CACHE, { recursive: true });
    const staging = await mkdtemp(path.join(CACHE, '.fetching-'));
    try {
      manifest = await unpack(staging, major);
      await writeFile(path.join(staging, MANIFEST), JSON.stringify(manifest));
      await rename(staging, current);
      console.log(`pg_dump: fetched Debian's postgresql-client-${major} ${manifest.version} into ${current} (reused from now on)`);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      manifest = await readManifest(current);
      if (!manifest) throw error;
    }
  }
  const inCache = (relative: string) => path.join(current, relative);
  return {
    createdb: path.join(inCache(manifest.bin), 'createdb'),
    pgDump: path.join(inCache(manifest.bin), 'pg_dump'),
    pgRestore: path.join(inCache(manifest.bin), 'pg_restore'),
    env: withLibraries(manifest.libraryPath.map(inCache)),
  };
}

async function readManifest(folder: string): Promise<Manifest | null> {
  const text = await readFile(path.join(folder, MANIFEST), 'utf8').catch(() => null);
  const manifest = text ? (JSON.parse(text) as Manifest) : null;
  return manifest && existsSync(path.join(folder, manifest.bin, 'pg_dump')) ? manifest : null;
}

/** The client package, then the library packages ldd still misses (their own dependencies included). */
async function unpack(staging: string, major: number): Promise<Manifest> {
  const root = path.join(staging, 'root');
  const [deb] = await downloadPackages([`postgresql-client-${major}`], path.join(staging, 'debs'));
  if (!deb) throw new Error(`apt-get download postgresql-client-${major} gave no package`);
  await command('dpkg-deb', ['-x', deb, root]);
  const bin = `root/usr/lib/postgresql/${major}/bin`;
  const pgDump = path.join(staging, bin, 'pg_dump');
  const seen = new Set<string>();
  let pending = [deb];
  let libraryPath: string[] = [];
  while ((await missingLibraries(pgDump, libraryPath)).length && pending.length) {
    const wanted: string[] = [];
    for (const fetched of pending) {
      for (const name of dependencyNames(await debField(fetched, 'Depends'))) {
        if (name.startsWith('lib') && !seen.has(name) && !(await installed(name))) wanted.push(name);
        seen.add(name);
      }
    }
    pending = wanted.length ? await downloadPackages(wanted, path.join(staging, `libs-${seen.size}`)) : [];
    for (const lib of pending) await command('dpkg-deb', ['-x', lib, root]);
    libraryPath = await libraryFolders(root);
  }
  const still = await missingLibraries(pgDump, libraryPath);
  if (still.length) throw new Error(`pg_dump needs ${still.join(', ')}: neither this machine nor the packages' Depends have it`);
  await command(pgDump, ['--version'], { env: withLibraries(libraryPath) });
  return { bin, libraryPath: libraryPath.map((dir) => path.relative(staging, dir)), version: await debField(deb, 'Version') };
}
