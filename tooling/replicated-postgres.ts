import { spawn, type ChildProcess } from 'node:child_process';
import { appendFile, chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { lowLevelBackup } from './low-level-backup.js';
import { placeBinaries, shippedBinaries, type Binaries } from './postgres/embedded/binaries.js';
import { runProgram } from './postgres/embedded/postgres-process.js';
import { postgresUser, sharedFolder, type SystemUser } from './postgres/embedded/postgres-user.js';
import { freePort } from '../src/util/free-port.js';

/**
 * Two real PostgreSQL servers from the embedded installation (the one the whole suite uses): a
 * primary and a streaming standby made from it by the low-level backup API (low-level-backup.ts),
 * as the embedded build ships no pg_basebackup. The standby streams through a physical slot.
 */
export interface ReplicatedPostgres {
  primaryPort: number;
  standbyPort: number;
  /** The URL of one server (by port), or of both in libpq's multi-host form, for `database`. */
  url(database: string, port: number): string;
  multiHostUrl(database: string): string;
  /** SIGKILL of the primary's postmaster: no shutdown checkpoint, no goodbye to clients. */
  killPrimary(): Promise<void>;
  /** pg_promote() on the standby; resolves once it accepts writes. */
  promoteStandby(): Promise<void>;
  stop(): Promise<void>;
}

const USER = 'postgres';
/** The server trusts local connections; PgBouncer checks this password (it needs one). */
const PASSWORD = 'failover';
const SLOT = 'standby';

/** The embedded binaries; as root a copy that the `postgres` user can reach, as the embedded server uses. */
async function embeddedBinaries(user: SystemUser | null): Promise<Binaries> {
  const shipped = await shippedBinaries();
  return user ? placeBinaries(shipped, user, await sharedFolder(user)) : shipped;
}

export async function startReplicatedPostgres(options: { synchronous: boolean }): Promise<ReplicatedPostgres> {
  const user = userInfo().uid === 0 ? await postgresUser() : null;
  const bin = path.join((await embeddedBinaries(user)).root, 'bin');
  const dir = await mkdtemp(path.join(tmpdir(), 'community-layer-replicated-'));
  await chmod(dir, 0o755);
  if (user) await chown(dir, user.uid, user.gid);
  const run = (program: string, args: string[]) => runProgram(path.join(bin, program), args, { user, cwd: dir, log: () => undefined });
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const url = (database: string, port: number) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  const servers: Server[] = [];
  const stopAll = async () => {
    for (const server of servers) await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await run('initdb', ['-D', path.join(dir, 'primary'), '-U', USER, '--auth=trust', '-E', 'UTF8', '--no-sync']);
    const primary = await startServer(bin, path.join(dir, 'primary'), primaryPort, dir, user);
    servers.push(primary);
    await sql(url('postgres', primaryPort), `CREATE ROLE replicator REPLICATION LOGIN`);
    await makeStandby(url('postgres', primaryPort), path.join(dir, 'primary'), path.join(dir, 'standby'), user);
    const standby = await startServer(bin, path.join(dir, 'standby'), standbyPort, dir, user);
    servers.push(standby);
    if (options.synchronous) {
      // Set after the backup, on the primary alone: the standby, once promoted, has no standby
      // of its own to wait for.
      await sql(url('postgres', primaryPort), `ALTER SYSTEM SET synchronous_standby_names = '*'`);
      await sql(url('postgres', primaryPort), `SELECT pg_reload_conf()`);
      await until(
        async () =>
          (await sql(url('postgres', primaryPort), `SELECT count(*)::int AS n FROM pg_stat_replication WHERE sync_state = 'sync'`))[0].n ===
          1,
      );
    } else {
      await until(
        async () =>
          (await sql(url('postgres', primaryPort), `SELECT count(*)::int AS n FROM pg_stat_replication WHERE state = 'streaming'`))[0].n ===
          1,
      );
    }
    return {
      primaryPort,
      standbyPort,
      url,
      multiHostUrl: (database) =>
        `postgres://${USER}:${PASSWORD}@127.0.0.1:${primaryPort},127.0.0.1:${standbyPort}/${database}?target_session_attrs=read-write`,
      killPrimary: () => primary.kill(),
      promoteStandby: async () => {
        await sql(url('postgres', standbyPort), `SELECT pg_promote(true, 60)`);
        await until(async () => (await sql(url('postgres', standbyPort), `SELECT pg_is_in_recovery() AS r`))[0].r === false);
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * A slot first (reserving WAL from now on, so none the standby needs is recycled before it
 * connects), then the backup, then what makes the copy a standby: `standby.signal`, and where and
 * through which slot it streams. pg_backup_start and pg_backup_stop run in one session.
 */
async function makeStandby(primaryUrl: string, primaryData: string, standbyData: string, user: SystemUser | null): Promise<void> {
  const session = new pg.Client({ connectionString: primaryUrl });
  session.on('error', () => undefined);
  await session.connect();
  try {
    await session.query(`SELECT pg_create_physical_replication_slot($1, true)`, [SLOT]);
    await lowLevelBackup(session, primaryData, standbyData, user);
  } finally {
    await session.end().catch(() => undefined);
  }
  const port = new URL(primaryUrl).port;
  const conninfo = `host=127.0.0.1 port=${port} user=replicator application_name=standby`;
  await appendFile(path.join(standbyData, 'postgresql.auto.conf'), `primary_conninfo = '${conninfo}'\nprimary_slot_name = '${SLOT}'\n`);
  await writeFile(path.join(standbyData, 'standby.signal'), '');
  if (user) await chown(path.join(standbyData, 'standby.signal'), user.uid, user.gid);
}

/** Runs one statement on a connection of its own. */
export async function sql(url: string, text: string, values: unknown[] = []): Promise<any[]> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query(text, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

interface Server {
  kill(): Promise<void>;
  stop(): Promise<void>;
}

async function startServer(bin: string, data: string, port: number, socketDir: string, user: SystemUser | null): Promise<Server> {
  const child: ChildProcess = spawn(
    path.join(bin, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${socketDir}`,
      '-c',
      'wal_level=replica',
      '-c',
      'max_wal_senders=4',
      '-c',
      'hot_standby=on',
      '-c',
      'max_connections=200',
      // A crash of the process (not the machine) loses nothing the kernel holds: fsync is not what is tested.
      '-c',
      'fsync=off',
      '-c',
      'full_page_writes=off',
    ],
    { cwd: socketDir, stdio: 'ignore', detached: true, ...(user ? { uid: user.uid, gid: user.gid } : {}) },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', () => undefined);
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  const halt = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
    process.removeListener('exit', onExit);
  };
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`postgres on port ${port} exited with code ${child.exitCode}`);
    return (await sql(`postgres://${USER}@127.0.0.1:${port}/postgres`, 'SELECT 1 AS ok').catch(() => []))[0]?.ok === 1;
  });
  return { kill: () => halt('SIGKILL'), stop: () => halt('SIGINT') };
}

async function until(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('replicated PostgreSQL: condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
