import { createHash } from 'node:crypto';
import { lstat, mkdir, readlink, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { canEnter, sharedFolder, type SystemUser } from './postgres-user.js';
import { EmbeddedStartError, USE_OWN_DATABASE } from './start-error.js';

/** Where the cluster lives (`pgdata`), and the configured path when it is a link to there. */
export interface ClusterFolder {
  pgdata: string;
  link: string | null;
}

/**
 * The data folder as configured, unless PostgreSQL's user (as root: `postgres`) cannot enter it.
 * Then the cluster lives under a shared folder, named after the configured path, and the
 * configured path becomes a link to it (`.data/postgres` still leads there). PostgreSQL itself
 * refuses a data folder its user does not own.
 */
export async function clusterFolder(dataDir: string, user: SystemUser | null): Promise<ClusterFolder> {
  const requested = path.resolve(dataDir);
  await mkdir(path.dirname(requested), { recursive: true });
  if (!user) return { pgdata: requested, link: null };
  const current = await lstat(requested).catch(() => null);
  // A link (made by an earlier start) is followed, even when its target is gone.
  const target = current?.isSymbolicLink() ? path.resolve(path.dirname(requested), await readlink(requested)) : requested;
  if (await canEnter(path.dirname(target), user)) return { pgdata: target, link: target === requested ? null : requested };
  if (current && !current.isSymbolicLink()) {
    throw new EmbeddedStartError(
      `the data folder ${requested} is out of reach of user "${user.name}", which runs PostgreSQL`,
      `that user cannot enter ${path.dirname(requested)} or one of its parents`,
      `Move the folder away (a new one is then set up where ${user.name} can reach it and linked from there), or set EMBEDDED_PG_DIR to a folder ${user.name} can enter. ${USE_OWN_DATABASE}`,
    );
  }
  const name = `community-layer-data-${createHash('sha256').update(requested).digest('hex').slice(0, 16)}`;
  const pgdata = path.join(await sharedFolder(user), name);
  if (current) await unlink(requested);
  await symlink(pgdata, requested);
  return { pgdata, link: requested };
}
