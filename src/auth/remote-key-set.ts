import { createRemoteJWKSet, customFetch, errors, type JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import type { RemoteKeySetConfig } from '../config/config.js';
import type { KeySource } from './key-source.js';

/** What an identity provider's key set may sign with: asymmetric only, as the keys say. */
const REMOTE_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;

/** A token arrived before the key set could ever be fetched. */
export class KeysUnavailableError extends Error {
  override name = 'KeysUnavailableError';
}

const FIRST_RETRY_MS = 250;

export interface RemoteKeySetOptions extends RemoteKeySetConfig {
  /** Where the key set is: a configured URL, or what the issuer's discovery document names. */
  locate(): Promise<URL>;
  logger: Logger;
}

/**
 * An identity provider's JWKS through jose's remote key set, which matches keys by `kid` and `alg`
 * and refetches on an unknown `kid` at most once per cooldown. Around it:
 *
 * - start never waits for the provider: the first fetch (and discovery) runs in the background and
 *   is retried with capped exponential backoff (up to cooldownMs) until it succeeds, each failure
 *   logged with its cause; until then `loaded` is false and tokens get KeysUnavailableError;
 * - the set is refetched when its Cache-Control max-age runs out, bounded by [cooldownMs, maxAgeMs]
 *   (no-store/no-cache: cooldownMs; no header: maxAgeMs); a failed refetch keeps the cached keys
 *   (the provider being down must not lock every caller out) and is retried;
 * - `generation` changes when a fetch returns different keys.
 */
export class RemoteKeySet implements KeySource {
  readonly algorithms = REMOTE_ALGORITHMS;
  readonly fetches = { ok: 0, failed: 0 };
  private remote: ReturnType<typeof createRemoteJWKSet> | null = null;
  private keysBody: string | null = null;
  private changes = 0;
  private freshForMs: number;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly options: RemoteKeySetOptions) {
    this.freshForMs = options.maxAgeMs;
  }

  get generation(): number {
    return this.changes;
  }

  get loaded(): boolean {
    return this.keysBody !== null;
  }

  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    if (!this.remote || this.keysBody === null) {
      // Why is for the log (it may name internal addresses), not for every caller.
      throw new KeysUnavailableError("the identity provider's signing keys are not loaded yet; try again shortly");
    }
    try {
      return await this.remote(header, token);
    } catch (error) {
      if (error instanceof errors.JOSEError && !isFetchFailure(error)) throw error;
      // The kid is unknown and the refetch it caused failed: the cached keys do not match.
      throw new errors.JWKSNoMatchingKey();
    }
  };

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.refresh();
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
  }

  private async refresh(): Promise<void> {
    let wait: number;
    const wasLoaded = this.loaded;
    try {
      this.remote ??= await this.createRemote();
      await this.remote.reload();
      if (!wasLoaded || this.failures > 0) this.options.logger.info({ keys: this.kids() }, 'identity provider keys loaded');
      this.failures = 0;
      wait = this.freshForMs;
    } catch (error) {
      const retryMs = Math.min(this.options.cooldownMs, FIRST_RETRY_MS * 2 ** Math.min(this.failures, 20));
      this.failures++;
      // Half fixed, half jitter: instances restarted together do not retry in step.
      wait = retryMs / 2 + Math.random() * (retryMs / 2);
      this.options.logger.warn(
        { problem: describeFailure(error), retryInMs: Math.round(wait), cachedKeys: this.loaded },
        this.loaded ? 'identity provider keys could not be refreshed; using the cached keys' : 'identity provider keys not available yet',
      );
    }
    if (!this.running) return;
    this.timer = setTimeout(() => void this.refresh(), wait);
    this.timer.unref();
  }

  private async createRemote(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const url = await this.options.locate();
    return createRemoteJWKSet(url, {
      cooldownDuration: this.options.cooldownMs,
      // Staleness is ours to decide (Cache-Control, stale-if-error): jose refetches only for unknown kids.
      cacheMaxAge: Infinity,
      timeoutDuration: this.options.timeoutMs,
      [customFetch]: (input: string, init: RequestInit) => this.observedFetch(input, init),
    });
  }

  /** Every fetch, ours or jose's (unknown kid): counts it and reads its freshness and keys. */
  private async observedFetch(input: string, init: RequestInit): Promise<Response> {
    try {
      const response = await fetch(input, init);
      if (response.status !== 200) throw new Error(`${input} answered HTTP ${response.status}`);
      const body = await response.clone().text();
      if (!isKeySet(body)) throw new Error(`${input} did not answer with a JSON Web Key Set`);
      this.freshForMs = freshFor(response.headers.get('cache-control'), this.options);
      if (body !== this.keysBody) {
        this.keysBody = body;
        this.changes++;
        if (this.changes > 1) this.options.logger.info({ keys: this.kids() }, 'identity provider keys changed');
      }
      this.fetches.ok++;
      return response;
    } catch (error) {
      this.fetches.failed++;
      throw error;
    }
  }

  private kids(): unknown[] {
    return (JSON.parse(this.keysBody ?? '{"keys":[]}') as { keys: { kid?: unknown }[] }).keys.map((key) => key.kid);
  }
}

/** fetch() says only "fetch failed"; the cause says what (ECONNREFUSED, a DNS error, …). */
function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { message?: string; code?: string } | undefined;
  const detail = cause?.message || cause?.code;
  return detail ? `${error.message}: ${detail}` : error.message;
}

function isKeySet(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { keys?: unknown } | null;
    return Array.isArray(parsed?.keys);
  } catch {
    return false;
  }
}

/** Errors of reaching or reading the key set, as opposed to a key not matching the token. */
function isFetchFailure(error: errors.JOSEError): boolean {
  return error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || error.code === 'ERR_JOSE_GENERIC';
}

/** How long a fetched key set is used: Cache-Control max-age within [cooldownMs, maxAgeMs]. */
function freshFor(cacheControl: string | null, bounds: { cooldownMs: number; maxAgeMs: number }): number {
  if (cacheControl === null) return bounds.maxAgeMs;
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/i.test(cacheControl)) return bounds.cooldownMs;
  const maxAge = /(^|,)\s*max-age\s*=\s*"?(\d+)"?\s*(,|$)/i.exec(cacheControl)?.[2];
  if (maxAge === undefined) return bounds.maxAgeMs;
  return Math.min(bounds.maxAgeMs, Math.max(bounds.cooldownMs, Number(maxAge) * 1000));
}
