import { createHash } from 'node:crypto';
import { createReadStream, type Stats } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

/** One entry of a folder tree, by what PostgreSQL needs of it: kind, size, mode, link target. */
export interface ManifestEntry {
  path: string;
  kind: 'dir' | 'file' | 'link';
  size: number;
  executable: boolean;
  target?: string;
}

/** Every entry under `root`, sorted by path. */
export async function readManifest(root: string): Promise<ManifestEntry[]> {
  return (await readTree(root)).map(({ entry }) => entry);
}

async function readTree(root: string): Promise<Array<{ entry: ManifestEntry; info: Stats }>> {
  const walk = async (relative: string): Promise<Array<{ entry: ManifestEntry; info: Stats }>> => {
    const names = (await readdir(path.join(root, relative))).sort();
    const nested = await Promise.all(
      names.map(async (name) => {
        const entryPath = path.join(relative, name);
        const full = path.join(root, entryPath);
        const info = await lstat(full);
        if (info.isSymbolicLink()) {
          return [{ entry: { path: entryPath, kind: 'link' as const, size: 0, executable: false, target: await readlink(full) }, info }];
        }
        if (info.isDirectory()) {
          return [{ entry: { path: entryPath, kind: 'dir' as const, size: 0, executable: true }, info }, ...(await walk(entryPath))];
        }
        return [{ entry: { path: entryPath, kind: 'file' as const, size: info.size, executable: (info.mode & 0o100) !== 0 }, info }];
      }),
    );
    return nested.flat();
  };
  return walk('');
}

export function manifestHash(entries: ManifestEntry[]): string {
  return createHash('sha256').update(JSON.stringify(entries)).digest('hex');
}

export async function fileHash(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/**
 * Why the tree at `root` is not a trustworthy copy of `expected` (null: it is): it must match entry
 * for entry, and every entry must belong to root and be writable by nobody else, so that nobody
 * but root can have changed it since it was placed and verified.
 */
export async function untrustedCopy(root: string, expected: ManifestEntry[]): Promise<string | null> {
  const top = await lstat(root);
  if (!top.isDirectory() || top.uid !== 0 || (top.mode & 0o022) !== 0)
    return `${root} is not a folder owned by root and writable only by root`;
  const actual = await readTree(root);
  if (manifestHash(actual.map(({ entry }) => entry)) !== manifestHash(expected)) return `${root} differs from the installed package`;
  for (const { entry, info } of actual) {
    if (info.uid !== 0 || (!info.isSymbolicLink() && (info.mode & 0o022) !== 0)) {
      return `${path.join(root, entry.path)} is not owned by root or is writable by others`;
    }
  }
  return null;
}
