import pg from 'pg';
import type { DatabaseHost, DatabaseTarget } from '../../config/database-url.js';

/** Every host was tried and none would do. A connection error (SQLSTATE class 08): retryable, a 503. */
export class NoPrimaryError extends Error {
  override name = 'NoPrimaryError';
  readonly code = '08001';
}

const READ_ONLY = `SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on' AS read_only`;

/** Whether the session on `client` refuses writes (a standby, or a database set read-only). */
export async function sessionIsReadOnly(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ read_only: boolean }>(READ_ONLY);
  return rows[0]?.read_only !== false;
}

/**
 * Which host of a target connections go to, libpq's way: the hosts in order, the first that
 * answers (and with `read-write`, accepts writes). The choice is kept until a connection to it
 * fails or finds it read-only; then the next connection looks again. One look at a time.
 */
export class PrimaryLocator {
  private chosen: DatabaseHost | null = null;
  /** The last host chosen, kept after it is forgotten: a change is a choice that differs from it. */
  private lastKept: DatabaseHost | null = null;
  private looking: Promise<DatabaseHost> | null = null;
  private readonly changeListeners = new Set<(host: DatabaseHost) => void>();

  constructor(
    private readonly target: DatabaseTarget,
    private readonly connectTimeoutMs: number,
  ) {}

  get current(): DatabaseHost | null {
    return this.chosen;
  }

  /** Told each time a host is chosen that differs from the previous choice (the first included). */
  onChange(listener: (host: DatabaseHost) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** The host to connect to: the kept one, or the first that qualifies now. */
  async host(): Promise<DatabaseHost> {
    if (this.chosen) return this.chosen;
    // A single host needs no look: connecting is the look.
    if (this.target.hosts.length === 1 && this.target.targetSessionAttrs === 'any') return this.keep(this.target.hosts[0]!);
    this.looking ??= this.look().finally(() => (this.looking = null));
    return this.looking;
  }

  /** A connection to `host` failed or found it read-only: the next connection looks again. */
  forget(host: DatabaseHost): void {
    if (this.chosen && sameHost(this.chosen, host)) this.chosen = null;
  }

  get checksWrites(): boolean {
    return this.target.targetSessionAttrs === 'read-write';
  }

  private async look(): Promise<DatabaseHost> {
    const refused: string[] = [];
    for (const host of this.target.hosts) {
      const verdict = await this.try(host);
      if (verdict === 'ok') return this.keep(host);
      refused.push(`${host.host}:${host.port} ${verdict}`);
    }
    throw new NoPrimaryError(`no database host would do (target_session_attrs=${this.target.targetSessionAttrs}): ${refused.join('; ')}`);
  }

  private async try(host: DatabaseHost): Promise<'ok' | string> {
    const client = new pg.Client({ connectionString: this.target.urlFor(host), connectionTimeoutMillis: this.connectTimeoutMs });
    client.on('error', () => undefined);
    try {
      await client.connect();
      if (this.checksWrites && (await sessionIsReadOnly(client))) return 'is read-only';
      return 'ok';
    } catch (error) {
      return `unreachable (${error instanceof Error ? error.message : String(error)})`;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  private keep(host: DatabaseHost): DatabaseHost {
    const previous = this.lastKept;
    this.chosen = host;
    this.lastKept = host;
    if (!previous || !sameHost(previous, host)) for (const listener of this.changeListeners) listener(host);
    return host;
  }
}

function sameHost(a: DatabaseHost, b: DatabaseHost): boolean {
  return a.host === b.host && a.port === b.port;
}
