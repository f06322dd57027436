import { jwtVerify, type JWTPayload } from 'jose';
import { ClaimError, viewerFromClaims, type ClaimMapping, type Viewer } from './claims.js';
import type { KeySource } from './key-source.js';
import { refusal, type VerificationOutcome } from './verification-outcome.js';

export type { Viewer } from './claims.js';

export const SCOPES = {
  /** Act on any user's membership and read anyone's contributions ledger. */
  admin: 'community:admin',
  /** Send signals on behalf of any user (back-end services). */
  signalWriter: 'signals:write',
  /** Read the change feed of every membership change and purge (downstream services). */
  feedReader: 'community:feed',
  /** Acknowledge purges as a registered downstream processor (named by the token's `sub`). */
  purgeAcknowledger: 'community:purge-ack',
} as const;

export type Authentication =
  | { viewer: Viewer; problem: null /** ms since the epoch; null: the token never expires */; expiresAt: number | null }
  | { viewer: null; problem: string; expiresAt: null };

export interface TokenRules extends ClaimMapping {
  issuer: string | undefined;
  audience: string | undefined;
  /** `aud`, or the claim that carries the audience instead (Cognito access tokens: `client_id`). */
  audienceClaim: string;
  allowNoExp: boolean;
  /** The longest a token may live: `exp` further than this from `iat`, or from now, is refused. */
  maxLifetimeMs: number;
}

const CLOCK_TOLERANCE_SECONDS = 30;
const CACHE_ENTRIES = 10_000;
const CACHE_SECONDS = 60;
const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/;

/**
 * Verifies `Authorization: Bearer <jwt>` against the key source with its algorithms only (so
 * `alg: none` and algorithm confusion are refused), exp/nbf/iat with a small tolerance, iss/aud when
 * configured, then maps the claims to a Viewer.
 *
 * Verified tokens are remembered (keyed by the whole token, signature included) for up to a minute,
 * never past their expiry nor past a change of the key set: clients reuse a token for many
 * requests, and verifying a signature costs more than the rest of a small request.
 */
export class Authenticator {
  private readonly verified = new Map<string, { viewer: Viewer; expiresAt: number | null; until: number; generation: number }>();

  constructor(
    private readonly keys: KeySource,
    private readonly rules: TokenRules,
    private readonly count: (outcome: VerificationOutcome) => void = () => undefined,
  ) {}

  /** The answer without a promise when there is one at hand (no token, or one verified lately); else null. */
  known(authorization: string | null): Authentication | null {
    if (authorization === null) return this.refuse('no_token', 'no bearer token');
    const cached = this.verified.get(authorization);
    if (!cached || cached.until <= Date.now() || cached.generation !== this.keys.generation) return null;
    this.count('cached');
    return { viewer: cached.viewer, problem: null, expiresAt: cached.expiresAt };
  }

  /** The caller, when known without verifying (no token: null; none verified lately: undefined); counts nothing. */
  peek(authorization: string | null): Viewer | null | undefined {
    if (authorization === null) return null;
    const cached = this.verified.get(authorization);
    return cached && cached.until > Date.now() && cached.generation === this.keys.generation ? cached.viewer : undefined;
  }

  async authenticate(authorization: string | null): Promise<Authentication> {
    const known = this.known(authorization);
    if (known || authorization === null) return known!;
    const match = BEARER.exec(authorization.trim());
    if (!match) return this.refuse('malformed', 'the Authorization header must be "Bearer <JWT>"');
    const generation = this.keys.generation;
    try {
      const { payload } = await jwtVerify(match[1]!, this.keys.getKey, {
        algorithms: [...this.keys.algorithms],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: this.rules.allowNoExp ? [] : ['exp'],
        ...(this.rules.issuer ? { issuer: this.rules.issuer } : {}),
        ...(this.rules.audience && this.rules.audienceClaim === 'aud' ? { audience: this.rules.audience } : {}),
      });
      this.checkAudienceClaim(payload);
      checkIssuedAt(payload);
      this.checkLifetime(payload);
      const viewer = viewerFromClaims(payload, this.rules);
      const expiresAt = typeof payload.exp === 'number' ? payload.exp * 1000 : null;
      this.remember(authorization, { viewer, expiresAt, generation });
      this.count('verified');
      return { viewer, problem: null, expiresAt };
    } catch (error) {
      const { outcome, problem } = refusal(error);
      return this.refuse(outcome, problem);
    }
  }

  private refuse(outcome: VerificationOutcome, problem: string): Authentication {
    this.count(outcome);
    return { viewer: null, problem, expiresAt: null };
  }

  /** jose checks `aud`; a provider that puts the audience elsewhere is checked here. */
  private checkAudienceClaim(payload: JWTPayload): void {
    const { audience, audienceClaim } = this.rules;
    if (!audience || audienceClaim === 'aud') return;
    const value = payload[audienceClaim];
    if (value === audience || (Array.isArray(value) && value.includes(audience))) return;
    throw new ClaimError(`the token's ${audienceClaim} claim is not accepted`);
  }

  /** `exp` is required so that a stolen token stops working: one a century away would never. */
  private checkLifetime(payload: JWTPayload): void {
    if (typeof payload.exp !== 'number') return;
    const maxSeconds = this.rules.maxLifetimeMs / 1000;
    const from = Math.min(typeof payload.iat === 'number' ? payload.iat : Infinity, Date.now() / 1000);
    if (payload.exp - from > maxSeconds) {
      throw new ClaimError(
        `the token's exp is more than ${formatDuration(this.rules.maxLifetimeMs)} after its iat or now (AUTH_TOKEN_MAX_LIFETIME_MS)`,
      );
    }
  }

  private remember(authorization: string, entry: { viewer: Viewer; expiresAt: number | null; generation: number }): void {
    if (this.verified.size >= CACHE_ENTRIES) this.verified.delete(this.verified.keys().next().value!);
    const until = Math.min(Date.now() + CACHE_SECONDS * 1000, entry.expiresAt ?? Infinity);
    this.verified.set(authorization, { ...entry, until });
  }
}

/**
 * A token issued in the future was minted by a wrong clock or to outlive a revocation. jose checks
 * `iat` only together with `maxTokenAge` (which would also require the claim), so it is checked here.
 */
function checkIssuedAt(payload: JWTPayload): void {
  if (typeof payload.iat !== 'number' || payload.iat <= Date.now() / 1000 + CLOCK_TOLERANCE_SECONDS) return;
  const ahead = `more than ${CLOCK_TOLERANCE_SECONDS} s ahead of this server's clock`;
  throw new ClaimError(`the token's iat is in the future (${ahead})`);
}

function formatDuration(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
