import { z } from 'zod';

/** The one place that reads the environment. Everything else receives a `Config`. */

const booleanFlag = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

const milliseconds = z.coerce.number().int().min(1).max(3_600_000);

const environmentSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65_535).default(4000),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  EMBEDDED_PG_DIR: z.string().min(1).default('.data/postgres'),
  DB_POOL_MAX: z.coerce.number().int().min(2).max(200).default(10),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  GRAPHIQL: booleanFlag.optional(),
  SIGNAL_BATCH_MAX: z.coerce.number().int().min(1).max(1000).default(256),
  SIGNAL_BATCH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  LISTENER_HEARTBEAT_MS: milliseconds.default(10_000),
  LISTENER_HEARTBEAT_TIMEOUT_MS: milliseconds.default(5_000),
  LISTENER_BACKOFF_MIN_MS: milliseconds.default(100),
  LISTENER_BACKOFF_MAX_MS: milliseconds.default(10_000),
  CACHE_RESYNC_MS: milliseconds.default(60_000),
  SHUTDOWN_TIMEOUT_MS: milliseconds.default(10_000),
});

export interface Config {
  env: 'development' | 'production' | 'test';
  http: { host: string; port: number };
  /** Unset: main starts an embedded PostgreSQL in `embeddedDataDir`. */
  databaseUrl: string | undefined;
  embeddedDataDir: string;
  poolMax: number;
  logLevel: string;
  graphiql: boolean;
  signalBatch: { maxSize: number; concurrency: number };
  listener: {
    heartbeatMs: number;
    heartbeatTimeoutMs: number;
    backoffMinMs: number;
    backoffMaxMs: number;
    resyncMs: number;
  };
  shutdownTimeoutMs: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(environment: Record<string, string | undefined>): Config {
  const parsed = environmentSchema.safeParse(stripEmpty(environment));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const env = parsed.data;
  if (env.LISTENER_BACKOFF_MIN_MS > env.LISTENER_BACKOFF_MAX_MS) {
    throw new ConfigError('Invalid configuration:\n  LISTENER_BACKOFF_MIN_MS: must not exceed LISTENER_BACKOFF_MAX_MS');
  }
  return {
    env: env.NODE_ENV,
    http: { host: env.HOST, port: env.PORT },
    databaseUrl: env.DATABASE_URL,
    embeddedDataDir: env.EMBEDDED_PG_DIR,
    poolMax: env.DB_POOL_MAX,
    logLevel: env.LOG_LEVEL,
    graphiql: env.GRAPHIQL ?? env.NODE_ENV !== 'production',
    signalBatch: { maxSize: env.SIGNAL_BATCH_MAX, concurrency: env.SIGNAL_BATCH_CONCURRENCY },
    listener: {
      heartbeatMs: env.LISTENER_HEARTBEAT_MS,
      heartbeatTimeoutMs: env.LISTENER_HEARTBEAT_TIMEOUT_MS,
      backoffMinMs: env.LISTENER_BACKOFF_MIN_MS,
      backoffMaxMs: env.LISTENER_BACKOFF_MAX_MS,
      resyncMs: env.CACHE_RESYNC_MS,
    },
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
  };
}

/** An empty variable means "not set", as shells and .env files commonly produce. */
function stripEmpty(environment: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
}
