import { existsSync } from 'node:fs';
import { rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { placeBinaries, shippedBinaries, type Binaries } from './embedded/binaries.js';
import { clusterFolder } from './embedded/cluster-folder.js';
import { SUPERUSER, initCluster, newPassword, readPassword, savePassword } from './embedded/cluster.js';
import { postgresUser, sharedFolder, type SystemUser } from './embedded/postgres-user.js';
import { announceStopping, settleLeftover, stoppedAnnouncement } from './embedded/leftover.js';
import { startOnFreePort, startOnPort } from './embedded/server-start.js';
import { EmbeddedStartError, USE_OWN_DATABASE, reason } from './embedded/start-error.js';

export { EmbeddedStartError } from './embedded/start-error.js';

export interface EmbeddedDatabase {
  url: string;
  /** The cluster's folder (as root possibly a shared folder that the configured path links to). */
  pgdata: string;
  binaries: string;
  /** Fast shutdown; resolves once PostgreSQL exited. Safe to call more than once. */
  stop(): Promise<void>;
  /** Says that a stop is coming (the app drains first): a start on the same folder meanwhile waits for it. */
  stopping(): Promise<void>;
  /** Fast shutdown that keeps the data folder, until `resume` (outage tests). */
  pause(): Promise<void>;
  /** Starts a paused server again, on the same port and data. */
  resume(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  database: string;
  /** false: the data directory is deleted on stop (tests). */
  persistent: boolean;
  log: (message: string) => void;
  /** Aborted: the start gives up at its next step (the process is stopping meanwhile). */
  signal?: AbortSignal;
  /** What the start did that its user should hear of (a PostgreSQL left by a killed start stopped); else `log`. */
  notice?: (message: string) => void;
  /** Another PostgreSQL build than the one npm installed (an older major); its `bin/`, `lib/`, `share/`. */
  binaries?: Binaries;
}

/** Clusters made before passwords were random used this one, published in the README. */
const LEGACY_PASSWORD = 'community-layer';

/**
 * Starts a real PostgreSQL from the npm-shipped binaries, on a free loopback port, in a process
 * group of its own. Every failure is an EmbeddedStartError (one paragraph, no stack).
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  try {
    return await start(options);
  } catch (error) {
    if (error instanceof EmbeddedStartError || options.signal?.aborted) throw error;
    throw new EmbeddedStartError(
      `could not be set up for the data folder ${path.resolve(options.dataDir)}`,
      reason(error),
      USE_OWN_DATABASE,
    );
  }
}

async function start(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  // PostgreSQL refuses to run as root: it then runs as a `postgres` system user.
  const user = process.getuid?.() === 0 ? await postgresUser() : null;
  const shipped = options.binaries ?? (await shippedBinaries());
  const binaries = user ? await placeBinaries(shipped, user, await sharedFolder(user)) : shipped;
  const { pgdata, link } = await clusterFolder(options.dataDir, user);
  const password = await clusterPassword(binaries, pgdata, user, options.log);
  options.signal?.throwIfAborted();
  const notice = options.notice ?? options.log;
  await settleLeftover(pgdata, notice, options.signal);
  let { server, port } = await startOnFreePort(binaries, pgdata, user, options.log, options.signal, notice);
  const urlFor = (secret: string, database: string) => `postgres://${SUPERUSER}:${secret}@127.0.0.1:${port}/${database}`;
  let url: string;
  try {
    url = urlFor(password ?? (await replaceLegacyPassword(pgdata, urlFor(LEGACY_PASSWORD, 'postgres'))), options.database);
    await ensureDatabase(url, options.database);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return {
    url,
    pgdata,
    binaries: binaries.root,
    pause: () => server.stop(),
    resume: async () => {
      server = await startOnPort(binaries, pgdata, port, user, options.log);
    },
    stopping: () => announceStopping(pgdata),
    stop: async () => {
      await announceStopping(pgdata);
      await server.stop();
      await stoppedAnnouncement(pgdata);
      if (options.persistent) return;
      await rm(pgdata, { recursive: true, force: true });
      if (link) await unlink(link).catch(() => undefined);
    },
  };
}

/** The existing cluster's password, or a new cluster's; a cluster another start just made is used. */
async function clusterPassword(
  binaries: Binaries,
  pgdata: string,
  user: SystemUser | null,
  log: (message: string) => void,
): Promise<string | null> {
  const exists = () => existsSync(path.join(pgdata, 'PG_VERSION'));
  if (exists()) return readPassword(pgdata);
  try {
    return await initCluster(binaries, pgdata, user, log);
  } catch (error) {
    if (exists()) return readPassword(pgdata);
    throw error;
  }
}

/** A cluster made with the once-published password gets a random one, kept beside its data. */
async function replaceLegacyPassword(pgdata: string, legacyUrl: string): Promise<string> {
  const password = newPassword();
  try {
    await withClient(legacyUrl, async (client) => {
      await client.query(`ALTER ROLE ${client.escapeIdentifier(SUPERUSER)} PASSWORD ${client.escapeLiteral(password)}`);
    });
    await savePassword(pgdata, password);
    return password;
  } catch (error) {
    throw new EmbeddedStartError(
      `the data folder ${pgdata} has no password on file`,
      `it does not accept the former default password either (${reason(error)})`,
      `Remove ${pgdata} to start with a new, empty cluster. ${USE_OWN_DATABASE}`,
    );
  }
}

async function ensureDatabase(url: string, name: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  try {
    await withClient(admin.toString(), async (client) => {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
    });
  } catch (error) {
    throw new EmbeddedStartError(`could not create the database "${name}"`, reason(error), USE_OWN_DATABASE);
  }
}

async function withClient(url: string, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  // Without a listener a dropped connection would be an unhandled 'error' event.
  client.on('error', () => undefined);
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
