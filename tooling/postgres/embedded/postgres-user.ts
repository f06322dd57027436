import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { EmbeddedStartError, USE_OWN_DATABASE, reason } from './start-error.js';

const run = promisify(execFile);

/** The account PostgreSQL runs as when we are root (PostgreSQL refuses to run as root). */
export interface SystemUser {
  name: string;
  uid: number;
  gid: number;
}

const NAME = 'postgres';

/** The `postgres` system user, created (no home, no login shell) when missing. */
export async function postgresUser(): Promise<SystemUser> {
  const existing = await lookUp(NAME);
  if (existing) return existing;
  try {
    await run('groupadd', ['--system', NAME]).catch(async (error: unknown) => {
      // 9: the group exists already (a user of that name may still be missing).
      if ((error as { code?: unknown }).code !== 9) throw error;
    });
    await run('useradd', [
      '--system',
      '--gid',
      NAME,
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      NAME,
    ]);
  } catch (error) {
    throw new EmbeddedStartError(
      `could not create the system user "${NAME}" to run PostgreSQL as (PostgreSQL refuses to run as root)`,
      reason(error),
      `Create it yourself (useradd --system ${NAME}) and start again, or run as a user other than root. ${USE_OWN_DATABASE}`,
    );
  }
  const created = await lookUp(NAME);
  if (!created)
    throw new EmbeddedStartError(`the system user "${NAME}" is missing`, 'useradd succeeded but "id" does not find it', USE_OWN_DATABASE);
  return created;
}

async function lookUp(name: string): Promise<SystemUser | null> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
    return { name, uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
  } catch {
    return null;
  }
}

/**
 * Whether `user` may traverse every folder down to `dir` (by mode bits; the child runs with its
 * primary group only, as Node drops supplementary groups when it switches user).
 */
export async function canEnter(dir: string, user: SystemUser): Promise<boolean> {
  let current = await realpath(dir).catch(() => null);
  if (!current) return false;
  for (;;) {
    const info = await stat(current).catch(() => null);
    if (!info?.isDirectory()) return false;
    const bit = info.uid === user.uid ? 0o100 : info.gid === user.gid ? 0o010 : 0o001;
    if ((info.mode & bit) === 0) return false;
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/**
 * A folder shared with `user` for what it must reach (the binaries, data of a checkout it cannot
 * enter): /var/tmp first, as it survives reboots.
 */
export async function sharedFolder(user: SystemUser): Promise<string> {
  const candidates = [...new Set(['/var/tmp', tmpdir(), '/tmp'])];
  for (const candidate of candidates) if (await canEnter(candidate, user)) return candidate;
  throw new EmbeddedStartError(
    `found no folder that user "${user.name}" can enter to run PostgreSQL from`,
    `it cannot enter any of ${candidates.join(', ')}`,
    `Make one of them enterable (chmod 1777 /var/tmp). ${USE_OWN_DATABASE}`,
  );
}
