import type { Logger } from 'pino';
import type { AppConfig, Config } from '../config/config.js';
import { parseDatabaseUrl } from '../config/database-url.js';
import { readConnectionSlots, type ConnectionSlots } from '../db/connection-slots.js';
import type { InstanceDatabase } from '../db/instance-database.js';

/**
 * The most sessions one instance holds at once, by kind (`sessionName`), from its settings: what
 * docs/scaling.md's formula, the start-up warning and test/sessions-per-instance.test.ts all use.
 * Its start-up sessions (migrations, the listen check, graphile-worker's schema install) close before
 * the listener and the queue open, so they never add to the peak.
 */
export interface SessionPlan {
  /** On DATABASE_LISTEN_URL, straight to PostgreSQL: never through a transaction pooler. */
  direct: { listener: number; 'webhook-queue': number };
  /** On DATABASE_URL: behind PgBouncer, its server pool holds them for every instance. */
  pooled: { requests: number; purge: number; 'fair-share': number };
}

export function sessionPlan({ database, webhooks }: Pick<Config, 'database' | 'webhooks'>): SessionPlan {
  return {
    // Delivery off: the queue only installs its schema at start, on two sessions (one holds the install lock).
    direct: { listener: 1, 'webhook-queue': webhooks.delivery === 'on' ? webhooks.queueConnections : 2 },
    pooled: { requests: database.poolMax, purge: 1, 'fair-share': 1 },
  };
}

export const total = (sessions: Record<string, number>): number => Object.values(sessions).reduce((sum, n) => sum + n, 0);

export interface Capacity {
  /** PostgreSQL's limits (`readConnectionSlots`); other sessions: its clients that are not instances (a migrate Job, psql, monitoring). */
  slots: Pick<ConnectionSlots, 'maxConnections' | 'superuserReservedConnections' | 'reservedConnections'> & { otherSessions: number };
  /** Behind a transaction pooler: the server sessions it holds (`default_pool_size` per database and role, per replica). */
  poolerSessions?: number;
}

/** How many instances fit: the slots left for ordinary roles, over direct + pooled sessions each (direct only behind a pooler). */
export function instancesThatFit(plan: SessionPlan, { slots, poolerSessions }: Capacity): number {
  const free =
    slots.maxConnections - slots.superuserReservedConnections - slots.reservedConnections - slots.otherSessions - (poolerSessions ?? 0);
  const perInstance = total(plan.direct) + (poolerSessions === undefined ? total(plan.pooled) : 0);
  return Math.max(0, Math.floor(free / perInstance));
}

/**
 * At start: one warning, with the numbers, when this instance's peak would exceed the slots the server
 * has free for it. Never refuses a start. Its pooled sessions count only when DATABASE_URL reaches the
 * same server as DATABASE_LISTEN_URL; else they go through a pooler whose server pool is sized apart.
 */
export async function warnOnConnectionSlots(
  config: AppConfig,
  connections: InstanceDatabase,
  instanceId: string,
  logger: Logger,
): Promise<void> {
  const plan = sessionPlan(config);
  const pooledHere = sameServers(config.database.url, config.database.listenUrl);
  const peak = total(plan.direct) + (pooledHere ? total(plan.pooled) : 0);
  let slots: ConnectionSlots;
  try {
    slots = await readConnectionSlots(connections.database.db, instanceId);
  } catch (error) {
    logger.debug({ err: error }, 'could not read max_connections and the sessions in use; no connection-slot check');
    return;
  }
  const free = slots.maxConnections - slots.superuserReservedConnections - slots.reservedConnections - (slots.sessions - slots.ownSessions);
  if (peak <= free) return;
  logger.warn(
    { ...slots, free, peak, direct: plan.direct, pooled: pooledHere ? plan.pooled : 'through a pooler' },
    `this instance may hold ${peak} database sessions, but the server has ${free} free for it ` +
      `(max_connections ${slots.maxConnections} - superuser_reserved_connections ${slots.superuserReservedConnections} - ` +
      `reserved_connections ${slots.reservedConnections} - ${slots.sessions - slots.ownSessions} held by others): ` +
      'requests may be refused with "remaining connection slots are reserved"; see docs/scaling.md',
  );
}

function sameServers(url: string, listenUrl: string): boolean {
  const hosts = (u: string) =>
    parseDatabaseUrl(u)
      .hosts.map(({ host, port }) => `${host}:${port}`)
      .join(',');
  return url === listenUrl || hosts(url) === hosts(listenUrl);
}
