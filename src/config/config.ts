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
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  AUTH_JWT_SECRET: z.string().refine((value) => Buffer.byteLength(value) >= 32, 'must be at least 32 bytes').optional(),
  AUTH_JWT_PUBLIC_KEY: z.string().includes('-----BEGIN PUBLIC KEY-----', { message: 'must be a PEM public key (SPKI)' }).optional(),
  AUTH_JWT_ISSUER: z.string().min(1).optional(),
  AUTH_JWT_AUDIENCE: z.string().min(1).optional(),
  CORS_ORIGINS: z
    .string()
    .transform((value) => value.split(',').map((origin) => origin.trim()).filter(Boolean))
    .pipe(z.array(z.url({ message: 'must be a comma-separated list of origins like https://app.example.com' })))
    .default([]),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  INTROSPECTION: booleanFlag.optional(),
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(2).max(100).default(12),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(1).max(1000).default(30),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(100).max(1_000_000).default(5000),
  GRAPHQL_MAX_COST: z.coerce.number().int().min(10).max(1_000_000).default(5000),
});

/** How bearer tokens are verified. `development`: main generates and persists a local secret. */
export type AuthKeyConfig =
  | { kind: 'secret'; secret: string }
  | { kind: 'publicKey'; pem: string }
  | { kind: 'development' };

export interface AuthConfig {
  key: AuthKeyConfig;
  issuer: string | undefined;
  audience: string | undefined;
}

export interface Config {
  env: 'development' | 'production' | 'test';
  http: { host: string; port: number; corsOrigins: string[]; bodyLimitBytes: number };
  /** Unset: main starts an embedded PostgreSQL in `embeddedDataDir`. */
  databaseUrl: string | undefined;
  embeddedDataDir: string;
  poolMax: number;
  logLevel: string;
  graphql: {
    graphiql: boolean;
    introspection: boolean;
    /** Production hides "did you mean" field suggestions from clients. */
    fieldSuggestions: boolean;
    maxDepth: number;
    maxAliases: number;
    maxTokens: number;
    maxCost: number;
  };
  signalBatch: { maxSize: number; concurrency: number };
  listener: {
    heartbeatMs: number;
    heartbeatTimeoutMs: number;
    backoffMinMs: number;
    backoffMaxMs: number;
    resyncMs: number;
  };
  shutdownTimeoutMs: number;
  /** How long readiness is false before the server stops accepting connections. */
  shutdownGraceMs: number;
  auth: AuthConfig;
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
  if (env.AUTH_JWT_SECRET && env.AUTH_JWT_PUBLIC_KEY) {
    throw new ConfigError('Invalid configuration:\n  AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY: set one of them, not both');
  }
  if (!env.AUTH_JWT_SECRET && !env.AUTH_JWT_PUBLIC_KEY && env.NODE_ENV === 'production') {
    throw new ConfigError(
      'Invalid configuration:\n  AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY: required in production (tokens cannot be verified without a key)',
    );
  }
  if (!env.DATABASE_URL && env.NODE_ENV === 'production') {
    throw new ConfigError(
      'Invalid configuration:\n  DATABASE_URL: required in production (without it the service would start an embedded development database)',
    );
  }
  const production = env.NODE_ENV === 'production';
  return {
    env: env.NODE_ENV,
    http: { host: env.HOST, port: env.PORT, corsOrigins: env.CORS_ORIGINS, bodyLimitBytes: env.BODY_LIMIT_BYTES },
    databaseUrl: env.DATABASE_URL,
    embeddedDataDir: env.EMBEDDED_PG_DIR,
    poolMax: env.DB_POOL_MAX,
    logLevel: env.LOG_LEVEL,
    graphql: {
      graphiql: env.GRAPHIQL ?? !production,
      introspection: env.INTROSPECTION ?? !production,
      fieldSuggestions: !production,
      maxDepth: env.GRAPHQL_MAX_DEPTH,
      maxAliases: env.GRAPHQL_MAX_ALIASES,
      maxTokens: env.GRAPHQL_MAX_TOKENS,
      maxCost: env.GRAPHQL_MAX_COST,
    },
    signalBatch: { maxSize: env.SIGNAL_BATCH_MAX, concurrency: env.SIGNAL_BATCH_CONCURRENCY },
    listener: {
      heartbeatMs: env.LISTENER_HEARTBEAT_MS,
      heartbeatTimeoutMs: env.LISTENER_HEARTBEAT_TIMEOUT_MS,
      backoffMinMs: env.LISTENER_BACKOFF_MIN_MS,
      backoffMaxMs: env.LISTENER_BACKOFF_MAX_MS,
      resyncMs: env.CACHE_RESYNC_MS,
    },
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
    auth: {
      key: env.AUTH_JWT_SECRET
        ? { kind: 'secret', secret: env.AUTH_JWT_SECRET }
        : env.AUTH_JWT_PUBLIC_KEY
          ? { kind: 'publicKey', pem: env.AUTH_JWT_PUBLIC_KEY.replace(/\\n/g, '\n') }
          : { kind: 'development' },
      issuer: env.AUTH_JWT_ISSUER,
      audience: env.AUTH_JWT_AUDIENCE,
    },
  };
}

/** An empty variable means "not set", as shells and .env files commonly produce. */
function stripEmpty(environment: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
}
