import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { connect } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { withLibraries } from './debian-packages.js';
import { pgbouncerBinary } from './pgbouncer-binary.js';
import { postgresUser } from './postgres/embedded/postgres-user.js';
import { freePort } from '../src/util/free-port.js';

/** A PgBouncer in transaction mode in front of one PostgreSQL, for the tests that run through it. */
export interface PgBouncer {
  /** The same URL (user, password, database) reaching the server through PgBouncer. */
  pooled(directUrl: string): string;
  /** Points it at another server (as a failover tool does): rewrites its ini and restarts it on the same port. */
  repoint(directUrl: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Server connections per database and user: fewer than the clients the tests open, so clients
 * really share server sessions (what would leak session state or a prepared statement).
 */
export const PGBOUNCER_POOL_SIZE = 6;

/**
 * A session pooler lends a server session per client for the client's whole life, so it must have
 * one for every session the instances hold (listeners, the webhook queue's pool, liveness locks);
 * with fewer, the late ones wait in PgBouncer until its query_wait_timeout (120 s).
 */
const SESSION_POOL_SIZE = 100;

export interface PgBouncerOptions {
  /**
   * Hand out idle server sessions in turn rather than the most recent one first: consecutive
   * statements of one client then land on different sessions, as on a busy pooler.
   */
  roundRobin?: boolean;
  /** `session` for LISTEN (a listener's own PgBouncer); `transaction` by default. */
  poolMode?: 'transaction' | 'session';
}

export async function startPgBouncer(directUrl: string, options: PgBouncerOptions = {}): Promise<PgBouncer> {
  const binary = await pgbouncerBinary();
  const poolMode = options.poolMode ?? 'transaction';
  let upstream = new URL(directUrl);
  const user = decodeURIComponent(upstream.username);
  const password = decodeURIComponent(upstream.password);
  const port = await freePort();
  // Under /tmp and readable by "postgres": PgBouncer refuses to run as root, so as root it runs as that user.
  const dir = await mkdtemp(path.join(tmpdir(), 'community-layer-pgbouncer-'));
  const owner = userInfo().uid === 0 ? await postgresUser() : null;
  await writeFile(path.join(dir, 'userlist.txt'), `"${user}" "${password}"\n`);
  const writeIni = () =>
    writeFile(
      path.join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${upstream.hostname} port=${upstream.port}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = plain',
        `auth_file = ${path.join(dir, 'userlist.txt')}`,
        `pool_mode = ${poolMode}`,
        `default_pool_size = ${poolMode === 'session' ? SESSION_POOL_SIZE : PGBOUNCER_POOL_SIZE}`,
        `server_round_robin = ${options.roundRobin ? 1 : 0}`,
        'max_client_conn = 2000',
        `logfile = ${path.join(dir, 'pgbouncer.log')}`,
        '',
      ].join('\n'),
    );
  await writeIni();
  await chmod(dir, 0o700);
  if (owner) {
    for (const file of ['', 'userlist.txt', 'pgbouncer.ini']) await chown(path.join(dir, file), owner.uid, owner.gid);
  }
  const launch = () => {
    // As root, -u: started as root (the binary may sit in a checkout only root can enter), it reads
    // its ini, then becomes that user before opening anything else.
    const child = spawn(binary.file, [...(owner ? ['-u', owner.name] : []), path.join(dir, 'pgbouncer.ini')], {
      stdio: 'ignore',
      env: withLibraries(binary.libraryPath),
    });
    child.once('error', () => undefined);
    return { child, exited: new Promise<number | null>((resolve) => child.once('exit', resolve)) };
  };
  let { child, exited } = launch();
  const pooled = (url: string) => {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(port);
    return parsed.toString();
  };
  try {
    await waitUntilServing(pooled(directUrl), exited);
  } catch (error) {
    const log = await readFile(path.join(dir, 'pgbouncer.log'), 'utf8').catch(() => '');
    await stop(child, exited);
    throw new Error(`pgbouncer did not start: ${error instanceof Error ? error.message : String(error)}\n${log}`);
  }
  return {
    pooled,
    repoint: async (url) => {
      upstream = new URL(url);
      await writeIni();
      await stop(child, exited);
      ({ child, exited } = launch());
      // Serving again once it listens; the new server may still be starting.
      await waitUntilListening(port, exited);
    },
    stop: async () => {
      await stop(child, exited);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilServing(url: string, exited: Promise<number | null>): Promise<void> {
  let done = false;
  void exited.then(() => (done = true));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (done) throw new Error('pgbouncer exited');
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

async function waitUntilListening(port: number, exited: Promise<number | null>): Promise<void> {
  let done = false;
  void exited.then(() => (done = true));
  const deadline = Date.now() + 15_000;
  while (!(await canConnect(port))) {
    if (done) throw new Error('pgbouncer exited');
    if (Date.now() > deadline) throw new Error(`pgbouncer is not listening on ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

async function stop(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  await exited;
}
