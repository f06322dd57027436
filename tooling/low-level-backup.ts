import { chmod, copyFile, lchown, mkdir, readdir, readlink, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import type { SystemUser } from './postgres/embedded/postgres-user.js';

/**
 * What the manual's "Backing Up the Data Directory" leaves out of a copy: the running server's
 * files, and folders whose contents the server recreates or that would mislead the copy (the
 * primary's slots, its WAL: the standby streams what it needs through its own slot).
 */
const LEFT_OUT = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'backup_label.old', 'tablespace_map']);
const EMPTIED = new Set(['pg_dynshmem', 'pg_notify', 'pg_replslot', 'pg_serial', 'pg_snapshots', 'pg_stat_tmp', 'pg_subtrans']);

/**
 * A base backup of a running primary without pg_basebackup (the embedded build ships none), by the
 * low-level API as PostgreSQL's own src/test/recovery/t/042_low_level_backup.pl makes one:
 * `pg_backup_start()`, a file copy of `data`, `pg_backup_stop()` in the same session, and its
 * `backup_label` (and tablespace map) written into the copy. Without that label the copy would
 * start as if from a crash at the wrong checkpoint: silently corrupt. `session` must be a
 * superuser's connection to the primary; the copy belongs to `user` (as root) with mode 0700.
 */
export async function lowLevelBackup(session: pg.Client, data: string, copy: string, user: SystemUser | null): Promise<void> {
  await session.query(`SELECT pg_backup_start('community-layer standby', true)`);
  try {
    await copyTree(data, copy, '', user);
  } catch (error) {
    await session.query('SELECT pg_backup_stop(false)').catch(() => undefined);
    throw error;
  }
  // false: no WAL archive to wait for; the standby's replication slot keeps the WAL it needs.
  const stopped = await session.query<{ labelfile: string; spcmapfile: string }>('SELECT labelfile, spcmapfile FROM pg_backup_stop(false)');
  const { labelfile, spcmapfile } = stopped.rows[0]!;
  await writeOwned(path.join(copy, 'backup_label'), labelfile, user);
  if (spcmapfile) await writeOwned(path.join(copy, 'tablespace_map'), spcmapfile, user);
  // PostgreSQL refuses a data folder that others may enter.
  await chmod(copy, 0o700);
}

/** Copies `relative` (a folder of `from`) to `to`, leaving out what LEFT_OUT and EMPTIED say. */
async function copyTree(from: string, to: string, relative: string, user: SystemUser | null): Promise<void> {
  await mkdir(path.join(to, relative), { mode: 0o700 });
  if (user) await lchown(path.join(to, relative), user.uid, user.gid);
  const top = relative.split(path.sep)[0] ?? '';
  if (EMPTIED.has(top)) return;
  for (const entry of await readdir(path.join(from, relative), { withFileTypes: true })) {
    const name = path.join(relative, entry.name);
    const temporary = entry.name.startsWith('pgsql_tmp') || entry.name === 'pg_internal.init';
    if ((relative === '' && LEFT_OUT.has(entry.name)) || temporary) continue;
    // pg_wal keeps its folders (archive_status, summaries) but none of the primary's segments.
    if (top === 'pg_wal' && !entry.isDirectory()) continue;
    if (entry.isDirectory()) await copyTree(from, to, name, user);
    else if (entry.isSymbolicLink()) await symlink(await readlink(path.join(from, name)), path.join(to, name));
    else await copyFile(path.join(from, name), path.join(to, name));
    if (user && !entry.isDirectory()) await lchown(path.join(to, name), user.uid, user.gid);
  }
}

async function writeOwned(file: string, text: string, user: SystemUser | null): Promise<void> {
  await writeFile(file, text, { mode: 0o600 });
  if (user) await lchown(file, user.uid, user.gid);
}
