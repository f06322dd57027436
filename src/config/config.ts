import { z } from 'zod';

/** The one place that reads the environment. Everything else receives a `Config`. */

const booleanFlag = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

const milliseconds = z.coerce.number().int().min(1).max(3_600_000);

const httpUrl = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' });

/** A JWT claim name: any non-empty string, namespaced URLs included (no path syntax). */
const claimName = z.string().min(1).max(256);

const environmentSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65_535).default(4000),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9464),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATABASE_LISTEN_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  EMBEDDED_PG_DIR: z.string().min(1).default('.data/postgres'),
  DB_POOL_MAX: z.coerce.number().int().min(2).max(200).default(10),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  GRAPHIQL: booleanFlag.optional(),
  SIGNAL_BATCH_MAX: z.coerce.number().int().min(1).max(1000).default(256),
  SIGNAL_BATCH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  SIGNAL_QUEUE_MAX: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  DB_ACQUIRE_TIMEOUT_MS: milliseconds.default(2_000),
  DB_STATEMENT_TIMEOUT_MS: milliseconds.default(5_000),
  DB_QUERY_TIMEOUT_MS: milliseconds.optional(),
  DB_LOCK_TIMEOUT_MS: milliseconds.default(5_000),
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: milliseconds.default(15_000),
  DB_SESSION_LIMITS: z.enum(['startup', 'server']).default('startup'),
  RETRY_AFTER_SECONDS: z.coerce.number().int().min(1).max(3600).default(1),
  LISTENER_HEARTBEAT_MS: milliseconds.default(10_000),
  LISTENER_HEARTBEAT_TIMEOUT_MS: milliseconds.default(5_000),
  LISTENER_BACKOFF_MIN_MS: milliseconds.default(100),
  LISTENER_BACKOFF_MAX_MS: milliseconds.default(10_000),
  CACHE_RESYNC_MS: milliseconds.default(60_000),
  SUBSCRIPTIONS_PER_USER_MAX: z.coerce.number().int().min(1).max(1000).default(8),
  SUBSCRIPTIONS_MAX: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  PURGE_CHUNK_SIZE: z.coerce.number().int().min(1).max(100_000).default(10_000),
  PURGE_CHUNK_PAUSE_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  PURGE_POLL_MS: milliseconds.default(1_000),
  PURGE_PROGRESS_MS: milliseconds.default(500),
  SHUTDOWN_TIMEOUT_MS: milliseconds.default(10_000),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  AUTH_JWT_SECRET: z.string().refine((value) => Buffer.byteLength(value) >= 32, 'must be at least 32 bytes').optional(),
  AUTH_JWT_PUBLIC_KEY: z.string().includes('-----BEGIN PUBLIC KEY-----', { message: 'must be a PEM public key (SPKI)' }).optional(),
  AUTH_JWKS_URL: httpUrl.optional(),
  AUTH_OIDC_ISSUER: httpUrl.optional(),
  AUTH_JWT_ISSUER: z.string().min(1).optional(),
  AUTH_JWT_AUDIENCE: z.string().min(1).optional(),
  AUTH_AUDIENCE_CLAIM: claimName.default('aud'),
  AUTH_USER_ID_CLAIM: claimName.default('sub'),
  AUTH_SCOPES_CLAIM: claimName.optional(),
  AUTH_ALLOW_NO_EXP: booleanFlag.default(false),
  AUTH_TOKEN_MAX_LIFETIME_MS: z.coerce.number().int().min(60_000).max(366 * 86_400_000).default(86_400_000),
  AUTH_JWKS_COOLDOWN_MS: z.coerce.number().int().min(1).max(3_600_000).default(30_000),
  AUTH_JWKS_MAX_AGE_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(600_000),
  AUTH_JWKS_TIMEOUT_MS: milliseconds.default(5_000),
  CORS_ORIGINS: z
    .string()
    .transform((value) => value.split(',').map((origin) => origin.trim()).filter(Boolean))
    .pipe(z.array(z.url({ message: 'must be a comma-separated list of origins like https://app.example.com' })))
    .default([]),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  BULK_REQUEST_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(4096),
  BULK_REQUESTS_MAX: z.coerce.number().int().min(1).max(10_000).default(1),
  BULK_REQUESTS_WAITING_MAX: z.coerce.number().int().min(0).max(100_000).default(32),
  BULK_MAX_EVENT_LOOP_UTILIZATION: z.coerce.number().min(0.1).max(1).default(0.9),
  BULK_REQUESTS_PER_ADDRESS_MAX: z.coerce.number().int().min(0).max(100_000).default(8),
  BULK_REQUESTS_PER_CREDENTIAL_MAX: z.coerce.number().int().min(0).max(100_000).default(8),
  BULK_BODY_TIMEOUT_MS: milliseconds.default(5_000),
  INTROSPECTION: booleanFlag.optional(),
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(2).max(100).default(12),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(1).max(1000).default(30),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(100).max(1_000_000).default(5000),
  GRAPHQL_MAX_COST: z.coerce.number().int().min(10).max(1_000_000).default(5000),
  GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().min(1).max(1000).default(20),
  REQUEST_MAX_SIGNALS: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  REQUEST_MAX_COHORT_ATTRIBUTIONS: z.coerce.number().int().min(0).max(32_000_000).default(32_000),
  GRAPHQL_TRUSTED_DOCUMENTS: z.enum(['allow', 'only']).default('allow'),
});

/** A key bearer tokens can be verified with: a static one, or a remote key set (`jwks`), or the key set
 * named by the issuer's discovery document (`oidc`). */
export type VerificationKeyConfig =
  | { kind: 'secret'; secret: string }
  | { kind: 'publicKey'; pem: string }
  | { kind: 'jwks'; url: string }
  | { kind: 'oidc'; issuer: string };

/** How bearer tokens are verified. `development`: main generates and persists a local secret. */
export type AuthKeyConfig = VerificationKeyConfig | { kind: 'development' };

export interface RemoteKeySetConfig {
  /** Least time between two fetches of the key set (unknown `kid`, retries, Cache-Control). */
  cooldownMs: number;
  /** Longest time a fetched key set is used before it is fetched again. */
  maxAgeMs: number;
  timeoutMs: number;
}

export interface AuthConfig<Key extends AuthKeyConfig = AuthKeyConfig> {
  key: Key;
  /** Required `iss`; with `oidc` always the discovered issuer. */
  issuer: string | undefined;
  /** Required audience, read from `audienceClaim` (`aud`, or e.g. Cognito's `client_id`). */
  audience: string | undefined;
  audienceClaim: string;
  /** The claim holding the caller's UInt64 user id. */
  userIdClaim: string;
  /** The one claim holding scopes; undefined: `scope`, `scp` and `permissions` together. */
  scopesClaim: string | undefined;
  allowNoExp: boolean;
  /** `exp` further than this from `iat` or from now refuses the token. */
  maxLifetimeMs: number;
  jwks: RemoteKeySetConfig;
}

export interface Config {
  env: 'development' | 'production' | 'test';
  http: {
    host: string;
    port: number;
    corsOrigins: string[];
    bodyLimitBytes: number;
    /**
     * Requests with longer bodies are bulk: at most `maxInProgress` being decoded, `maxWaiting`
     * waiting to be, and none enters while the event loop was busier than `maxEventLoopUtilization`.
     */
    bulk: {
      bytes: number;
      maxInProgress: number;
      maxWaiting: number;
      maxEventLoopUtilization: number;
      /** Places (in progress or waiting) one client address, or one credential, may hold; 0: no cap. */
      maxPerAddress: number;
      maxPerCredential: number;
      /** How long an admitted bulk request may take to send its body (then 408). */
      bodyTimeoutMs: number;
    };
  };
  /** The Prometheus listener, apart from the API port. */
  metrics: { host: string; port: number };
  /** Unset: main starts an embedded PostgreSQL in `embeddedDataDir`. May be a transaction pooler. */
  databaseUrl: string | undefined;
  /** The session connection for LISTEN, straight to the primary; unset: `databaseUrl`. */
  databaseListenUrl: string | undefined;
  embeddedDataDir: string;
  poolMax: number;
  /**
   * Session limits of every pooled connection, and how long a request may wait for one. `sessionLimits`:
   * `startup` sends them as startup parameters of each connection; `server` means the server already
   * applies them (ALTER ROLE … SET, for a transaction pooler that refuses such parameters) and start-up
   * checks that it does.
   */
  database: {
    acquireTimeoutMs: number;
    statementTimeoutMs: number;
    /** The client-side deadline of one statement: backs up statement_timeout when the server goes silent. */
    queryTimeoutMs: number;
    lockTimeoutMs: number;
    idleInTransactionTimeoutMs: number;
    sessionLimits: 'startup' | 'server';
  };
  /** What a 503 (database unavailable, overload) tells clients to wait. */
  retryAfterSeconds: number;
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
    maxDirectives: number;
    /**
     * `allow`: operations by trusted-document hash and arbitrary documents; `only`: hashes of
     * documents in the manifest only.
     */
    trustedDocuments: 'allow' | 'only';
  };
  /** What one request (one operation) may write, across all its aliases and list arguments. */
  requestBudget: { signals: number; cohortAttributions: number };
  /** Group commit: group size, groups in flight, and the most signals waiting before requests are shed. */
  signalBatch: { maxSize: number; concurrency: number; maxQueued: number };
  listener: {
    heartbeatMs: number;
    heartbeatTimeoutMs: number;
    backoffMinMs: number;
    backoffMaxMs: number;
    resyncMs: number;
  };
  /** Caps on `communityLayerStatusChanged` streams, per watched user and per instance. */
  subscriptions: { perUser: number; perInstance: number };
  /**
   * Purge jobs: signals per chunk (each chunk one transaction), pause between chunks, how often an
   * idle worker looks for work, and how often a progress stream re-reads a running purge.
   */
  purge: { chunkSize: number; chunkPauseMs: number; pollMs: number; progressMs: number };
  shutdownTimeoutMs: number;
  /** How long readiness is false before the server stops accepting connections. */
  shutdownGraceMs: number;
  auth: AuthConfig;
}

/**
 * What `createApp` runs on: the configuration with its resources resolved (a database to connect
 * to, a key to verify tokens with), so an app can never start half-configured.
 */
export type AppConfig = Omit<Config, 'databaseUrl' | 'databaseListenUrl' | 'auth'> & {
  databaseUrl: string;
  databaseListenUrl: string;
  auth: AuthConfig<VerificationKeyConfig>;
  /** Pre-filled in GraphiQL; only ever set in development, when the secret was generated locally. */
  developmentToken: string | null;
};

export function resolveConfig(
  config: Config,
  resources: { databaseUrl: string; authKey: VerificationKeyConfig; developmentToken?: string },
): AppConfig {
  return {
    ...config,
    databaseUrl: resources.databaseUrl,
    databaseListenUrl: config.databaseListenUrl ?? resources.databaseUrl,
    auth: { ...config.auth, key: resources.authKey },
    developmentToken: resources.developmentToken ?? null,
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Environment = z.infer<typeof environmentSchema>;

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
  if (env.DB_QUERY_TIMEOUT_MS !== undefined && env.DB_QUERY_TIMEOUT_MS <= env.DB_STATEMENT_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration:\n  DB_QUERY_TIMEOUT_MS: must exceed DB_STATEMENT_TIMEOUT_MS (the server cancels first; the client deadline backs it up)');
  }
  if (env.DATABASE_LISTEN_URL && !env.DATABASE_URL) {
    throw new ConfigError('Invalid configuration:\n  DATABASE_LISTEN_URL: set only together with DATABASE_URL (the embedded database needs neither)');
  }
  const authProblem = authConfigProblem(env);
  if (authProblem) throw new ConfigError(`Invalid configuration:\n  ${authProblem}`);
  if (!env.DATABASE_URL && env.NODE_ENV === 'production') {
    throw new ConfigError(
      'Invalid configuration:\n  DATABASE_URL: required in production (without it the service would start an embedded development database)',
    );
  }
  const production = env.NODE_ENV === 'production';
  return {
    env: env.NODE_ENV,
    http: {
      host: env.HOST,
      port: env.PORT,
      corsOrigins: env.CORS_ORIGINS,
      bodyLimitBytes: env.BODY_LIMIT_BYTES,
      bulk: { bytes: env.BULK_REQUEST_BYTES, maxInProgress: env.BULK_REQUESTS_MAX, maxWaiting: env.BULK_REQUESTS_WAITING_MAX, maxEventLoopUtilization: env.BULK_MAX_EVENT_LOOP_UTILIZATION, maxPerAddress: env.BULK_REQUESTS_PER_ADDRESS_MAX, maxPerCredential: env.BULK_REQUESTS_PER_CREDENTIAL_MAX, bodyTimeoutMs: env.BULK_BODY_TIMEOUT_MS },
    },
    metrics: { host: env.METRICS_HOST, port: env.METRICS_PORT },
    databaseUrl: env.DATABASE_URL,
    databaseListenUrl: env.DATABASE_LISTEN_URL,
    embeddedDataDir: env.EMBEDDED_PG_DIR,
    poolMax: env.DB_POOL_MAX,
    database: {
      acquireTimeoutMs: env.DB_ACQUIRE_TIMEOUT_MS,
      statementTimeoutMs: env.DB_STATEMENT_TIMEOUT_MS,
      queryTimeoutMs: env.DB_QUERY_TIMEOUT_MS ?? env.DB_STATEMENT_TIMEOUT_MS + 1_000,
      lockTimeoutMs: env.DB_LOCK_TIMEOUT_MS,
      idleInTransactionTimeoutMs: env.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      sessionLimits: env.DB_SESSION_LIMITS,
    },
    retryAfterSeconds: env.RETRY_AFTER_SECONDS,
    logLevel: env.LOG_LEVEL,
    graphql: {
      graphiql: env.GRAPHIQL ?? !production,
      introspection: env.INTROSPECTION ?? !production,
      fieldSuggestions: !production,
      maxDepth: env.GRAPHQL_MAX_DEPTH,
      maxAliases: env.GRAPHQL_MAX_ALIASES,
      maxTokens: env.GRAPHQL_MAX_TOKENS,
      maxCost: env.GRAPHQL_MAX_COST,
      maxDirectives: env.GRAPHQL_MAX_DIRECTIVES,
      trustedDocuments: env.GRAPHQL_TRUSTED_DOCUMENTS,
    },
    requestBudget: { signals: env.REQUEST_MAX_SIGNALS, cohortAttributions: env.REQUEST_MAX_COHORT_ATTRIBUTIONS },
    signalBatch: { maxSize: env.SIGNAL_BATCH_MAX, concurrency: env.SIGNAL_BATCH_CONCURRENCY, maxQueued: env.SIGNAL_QUEUE_MAX },
    listener: {
      heartbeatMs: env.LISTENER_HEARTBEAT_MS,
      heartbeatTimeoutMs: env.LISTENER_HEARTBEAT_TIMEOUT_MS,
      backoffMinMs: env.LISTENER_BACKOFF_MIN_MS,
      backoffMaxMs: env.LISTENER_BACKOFF_MAX_MS,
      resyncMs: env.CACHE_RESYNC_MS,
    },
    subscriptions: { perUser: env.SUBSCRIPTIONS_PER_USER_MAX, perInstance: env.SUBSCRIPTIONS_MAX },
    purge: { chunkSize: env.PURGE_CHUNK_SIZE, chunkPauseMs: env.PURGE_CHUNK_PAUSE_MS, pollMs: env.PURGE_POLL_MS, progressMs: env.PURGE_PROGRESS_MS },
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
    auth: authConfig(env),
  };
}

const KEY_VARIABLES = ['AUTH_JWT_SECRET', 'AUTH_JWT_PUBLIC_KEY', 'AUTH_JWKS_URL', 'AUTH_OIDC_ISSUER'] as const;

/** What is wrong with the auth variables taken together, naming them; null when nothing. */
function authConfigProblem(env: Environment): string | null {
  const keys = KEY_VARIABLES.filter((name) => env[name] !== undefined);
  const production = env.NODE_ENV === 'production';
  if (keys.length > 1) return `${keys.join(', ')}: set exactly one of them`;
  if (keys.length === 0 && production) {
    return `${KEY_VARIABLES.join(', ')}: one is required in production (tokens cannot be verified without a key)`;
  }
  if (env.AUTH_OIDC_ISSUER && env.AUTH_JWT_ISSUER && env.AUTH_OIDC_ISSUER !== env.AUTH_JWT_ISSUER) {
    return 'AUTH_JWT_ISSUER: must be unset or equal AUTH_OIDC_ISSUER (tokens must come from the discovered issuer)';
  }
  if (env.AUTH_JWKS_COOLDOWN_MS > env.AUTH_JWKS_MAX_AGE_MS) return 'AUTH_JWKS_COOLDOWN_MS: must not exceed AUTH_JWKS_MAX_AGE_MS';
  const remote = env.AUTH_JWKS_URL ? 'AUTH_JWKS_URL' : env.AUTH_OIDC_ISSUER ? 'AUTH_OIDC_ISSUER' : null;
  if (remote && production) {
    // A provider signs tokens for every API and app it serves: without iss and aud, any of them would do.
    const missing = [
      ...(remote === 'AUTH_JWKS_URL' && !env.AUTH_JWT_ISSUER ? ['AUTH_JWT_ISSUER'] : []),
      ...(!env.AUTH_JWT_AUDIENCE ? ['AUTH_JWT_AUDIENCE'] : []),
    ];
    if (missing.length > 0) {
      return `${missing.join(', ')}: required in production with ${remote} (otherwise tokens the provider issues for other APIs would be accepted)`;
    }
    if (!env[remote]!.startsWith('https:')) return `${remote}: must be an https URL in production`;
  }
  return null;
}

function authConfig(env: Environment): AuthConfig {
  return {
    key: env.AUTH_JWT_SECRET
      ? { kind: 'secret', secret: env.AUTH_JWT_SECRET }
      : env.AUTH_JWT_PUBLIC_KEY
        ? { kind: 'publicKey', pem: env.AUTH_JWT_PUBLIC_KEY.replace(/\\n/g, '\n') }
        : env.AUTH_JWKS_URL
          ? { kind: 'jwks', url: env.AUTH_JWKS_URL }
          : env.AUTH_OIDC_ISSUER
            ? { kind: 'oidc', issuer: env.AUTH_OIDC_ISSUER }
            : { kind: 'development' },
    issuer: env.AUTH_OIDC_ISSUER ?? env.AUTH_JWT_ISSUER,
    audience: env.AUTH_JWT_AUDIENCE,
    audienceClaim: env.AUTH_AUDIENCE_CLAIM,
    userIdClaim: env.AUTH_USER_ID_CLAIM,
    scopesClaim: env.AUTH_SCOPES_CLAIM,
    allowNoExp: env.AUTH_ALLOW_NO_EXP,
    maxLifetimeMs: env.AUTH_TOKEN_MAX_LIFETIME_MS,
    jwks: { cooldownMs: env.AUTH_JWKS_COOLDOWN_MS, maxAgeMs: env.AUTH_JWKS_MAX_AGE_MS, timeoutMs: env.AUTH_JWKS_TIMEOUT_MS },
  };
}

/** An empty variable means "not set", as shells and .env files commonly produce. */
function stripEmpty(environment: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
}
