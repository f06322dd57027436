import pg from 'pg';
import { parseDatabaseUrl, type DatabaseHost } from '../../config/database-url.js';
import { PrimaryLocator, sessionIsReadOnly } from './primary-locator.js';

/** A session that refused writes where target_session_attrs=read-write asked for them: retryable. */
export class ReadOnlyHostError extends Error {
  override name = 'ReadOnlyHostError';
  readonly code = '08001';
}

/**
 * Where the service connects, as one URL with one host or several. Every connection it opens (the
 * pools, the listener, the listen check, migrations) is a `Client` of its endpoint, so all of them
 * follow the primary: each new connection goes to the locator's host, checks it still accepts
 * writes when asked to, and a failure makes the next one look again.
 */
export interface DatabaseEndpoint {
  /** A pg Client class bound to this endpoint (pg-pool's `Client` option). */
  readonly Client: typeof pg.Client;
  /** The URL with its password masked, for logs. */
  readonly masked: string;
  /** The host connections go to now (null before the first, and while looking). */
  readonly host: DatabaseHost | null;
  /** Told when connections start going to another host than before (the first included). */
  onHostChange(listener: (host: DatabaseHost) => void): () => void;
  /** A new client on this endpoint (not yet connected). */
  client(config?: Omit<pg.ClientConfig, 'connectionString'>): pg.Client;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

export function databaseEndpoint(url: string, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS): DatabaseEndpoint {
  const target = parseDatabaseUrl(url);
  const locator = new PrimaryLocator(target, connectTimeoutMs);

  class EndpointClient extends pg.Client {
    private closing = false;

    constructor(config: pg.ClientConfig = {}) {
      // pg parses a single host only: the first stands in until connect() picks one.
      super({ ...config, connectionString: target.urlFor(target.hosts[0]!) });
      // A server shutting down can send its FATAL in the same read as ReadyForQuery: pg emits it
      // before the owner (pg-pool, the listener) has attached its listener, which would crash the
      // process. The query in flight and the owner's listeners still get every error.
      this.on('error', () => undefined);
    }

    override end(): Promise<void>;
    override end(callback: (err: Error) => void): void;
    override end(callback?: (err: Error) => void): Promise<void> | void {
      this.closing = true;
      return callback ? super.end(callback) : super.end();
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error) => void): void;
    override connect(callback?: (err: Error) => void): Promise<pg.Client> | void {
      const connected = this.connectToPrimary();
      if (!callback) return connected;
      connected.then(
        () => callback(null as unknown as Error),
        (error: Error) => callback(error),
      );
    }

    private async connectToPrimary(): Promise<pg.Client> {
      const host = await locator.host();
      this.host = host.host;
      this.port = host.port;
      try {
        await super.connect();
      } catch (error) {
        locator.forget(host);
        throw error;
      }
      // A session lost without our asking (the server died, the network broke): the next connection
      // looks again at once, rather than failing once more against the same host.
      this.once('end', () => this.closing || locator.forget(host));
      if (locator.checksWrites && (await sessionIsReadOnly(this).catch(() => true))) {
        locator.forget(host);
        await this.end().catch(() => undefined);
        throw new ReadOnlyHostError(`${host.host}:${host.port} does not accept writes (target_session_attrs=read-write)`);
      }
      return this;
    }
  }

  return {
    Client: EndpointClient,
    masked: target.masked,
    get host() {
      return locator.current;
    },
    onHostChange: (listener) => locator.onChange(listener),
    client: (config = {}) => new EndpointClient(config),
  };
}
