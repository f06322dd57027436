import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { connectDatabase, type DatabaseHandle } from './database.js';
import { databaseEndpoint, type DatabaseEndpoint } from './endpoint/database-endpoint.js';
import { migrateEverything } from './migrations/migrate.js';
import { sessionName } from './session-names.js';

/**
 * Every connection an instance opens, all following the same primary (one endpoint per URL). The
 * pools connect lazily; the composition root that opens them closes each in a part of its own,
 * after what runs on it (src/app.ts: `database`, `purge database`), so there is no close-all here.
 */
export interface InstanceDatabase {
  /** DATABASE_URL: the request pool and the purge worker's. */
  endpoint: DatabaseEndpoint;
  /** DATABASE_LISTEN_URL: the listener, the listen check and migrations (the same endpoint when the URLs are equal). */
  listenEndpoint: DatabaseEndpoint;
  database: DatabaseHandle;
  /** The purge worker's own pool: its chunks never wait for, or hold, a request's pool slot. */
  purgeDatabase: DatabaseHandle;
  /** Applies pending migrations over a short-lived session (opened and closed by each call). */
  migrate(): Promise<string[]>;
}

/**
 * `instanceId` names its sessions (`sessionName`: requests, purge, migrate); `traced`: a tracer when tracing is on, for a span per
 * statement of the request and purge pools.
 */
export function openInstanceDatabase(
  config: Config['database'] & { url: string; listenUrl: string },
  logger: Logger,
  instanceId: string,
  traced: { tracer?: Tracer } = {},
): InstanceDatabase {
  const endpoint = databaseEndpoint(config.url, config.acquireTimeoutMs);
  const listenEndpoint = config.listenUrl === config.url ? endpoint : databaseEndpoint(config.listenUrl, config.acquireTimeoutMs);
  const named: Record<string, DatabaseEndpoint> =
    listenEndpoint === endpoint ? { database: endpoint } : { database: endpoint, listen: listenEndpoint };
  for (const [name, which] of Object.entries(named)) {
    which.onHostChange((host) =>
      logger.info({ url: which.masked, host: `${host.host}:${host.port}` }, `${name} connections go to ${host.host}:${host.port}`),
    );
  }
  const database = connectDatabase({
    url: config.url,
    endpoint,
    poolMax: config.poolMax,
    logger,
    limits: config,
    applicationName: sessionName('requests', instanceId),
    ...traced,
  });
  const purgeDatabase = connectDatabase({
    url: config.url,
    endpoint,
    poolMax: 1,
    logger,
    limits: config,
    applicationName: sessionName('purge', instanceId),
    ...traced,
  });
  return {
    endpoint,
    listenEndpoint,
    database,
    purgeDatabase,
    /**
     * Kysely's migration lock is a session advisory lock (pg_advisory_lock … pg_advisory_unlock in
     * separate statements): through a transaction pooler the unlock may reach another server
     * session and the lock would leak. Migrations therefore use a session on the listen URL.
     */
    migrate: async () => {
      const session = connectDatabase({
        url: config.listenUrl,
        endpoint: listenEndpoint,
        poolMax: 2,
        logger,
        applicationName: sessionName('migrate', instanceId),
      });
      try {
        return await migrateEverything(session, logger);
      } finally {
        await session.close();
      }
    },
  };
}
