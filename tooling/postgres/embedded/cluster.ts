import { randomBytes } from 'node:crypto';
import { chown, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { binary, type Binaries } from './binaries.js';
import { runProgram } from './postgres-process.js';
import type { SystemUser } from './postgres-user.js';
import { EmbeddedStartError, USE_OWN_DATABASE, reason } from './start-error.js';

export const SUPERUSER = 'postgres';

/** Kept in the cluster's own folder, so the password lives and dies with its cluster. */
const PASSWORD_FILE = 'community-layer.password';

export function newPassword(): string {
  return randomBytes(24).toString('base64url');
}

/** The cluster's password, or null when it has none on file (a cluster made before they existed). */
export async function readPassword(pgdata: string): Promise<string | null> {
  return readFile(path.join(pgdata, PASSWORD_FILE), 'utf8').then(
    (text) => text.trim(),
    () => null,
  );
}

export async function savePassword(pgdata: string, password: string): Promise<void> {
  await writeFile(path.join(pgdata, PASSWORD_FILE), `${password}\n`, { mode: 0o600 });
}

/**
 * Creates a cluster with a random superuser password. initdb works in a private folder beside
 * `pgdata`, which is renamed into place only when complete, so an interrupted start leaves no
 * half-made cluster behind.
 */
export async function initCluster(
  binaries: Binaries,
  pgdata: string,
  user: SystemUser | null,
  log: (message: string) => void,
): Promise<string> {
  const password = newPassword();
  const staging = await mkdtemp(path.join(path.dirname(pgdata), '.community-layer-initdb-'));
  try {
    const passwordFile = path.join(staging, 'password');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (user) {
      await chown(staging, user.uid, user.gid);
      await chown(passwordFile, user.uid, user.gid);
    }
    const staged = path.join(staging, 'pgdata');
    await runProgram(
      binary(binaries, 'initdb'),
      [
        `--pgdata=${staged}`,
        `--username=${SUPERUSER}`,
        `--pwfile=${passwordFile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--lc-messages=C',
      ],
      { user, cwd: staging, log },
    );
    await savePassword(staged, password);
    await rename(staged, pgdata);
    return password;
  } catch (error) {
    throw new EmbeddedStartError(
      `could not create a database cluster in ${pgdata}`,
      reason(error),
      `Check the free space and permissions of ${path.dirname(pgdata)}, or set EMBEDDED_PG_DIR to another folder. ${USE_OWN_DATABASE}`,
    );
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
