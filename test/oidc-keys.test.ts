import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import {
  capturedLog,
  eventually,
  freshDatabase,
  gql,
  metric,
  readiness,
  rowCounts,
  sqlClient,
  startApp,
  type GraphQLResponse,
} from './support/harness.js';
import { IdentityProvider, oidcEnvironment } from './support/identity-provider.js';
import { RESOURCES, SHORT_LIVED_SECONDS, signingKey } from './support/identity-provider-configuration.js';
import { subscribe } from './support/sse.js';

/**
 * The provider's keys over time, against a real OpenID provider: start before it is reachable,
 * rotation, the provider going down, and tokens expiring under an open subscription.
 */

const USER = 'auth0|5e1f';
const accounts = { [USER]: '5150' };
// Real providers send a max-age (Auth0: 15 s); the app's own default (AUTH_JWKS_MAX_AGE_MS) is 10 minutes.
const jwksCacheControl = 'public, max-age=1';
const STATUS = `{ communityLayerStatus { userId status } }`;
const LEAVE = `mutation { leaveCommunityLayer { userId status } }`;

let databaseUrl: string;
let db: pg.Client;
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  db = await sqlClient(databaseUrl);
});

afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
  await db?.end();
});

async function provider(keys = [signingKey('key-1')]): Promise<IdentityProvider> {
  const idp = await IdentityProvider.start({ keys, accounts, jwksCacheControl });
  cleanup.push(() => idp.stop().catch(() => undefined));
  return idp;
}

async function appFor(idp: IdentityProvider, logger?: ReturnType<typeof capturedLog>['logger']): Promise<App> {
  const app = await startApp(databaseUrl, oidcEnvironment(idp), logger ? { logger } : {});
  cleanup.push(() => app.stop());
  return app;
}

function outcome(response: GraphQLResponse): string {
  expect(response.status).toBeLessThan(500);
  return response.errors ? `${response.errors[0]!.extensions?.code}: ${response.errors[0]!.message}` : 'ok';
}

function kid(jwt: string): string {
  return JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()).kid;
}

describe('remote key set', () => {
  it('starts while the provider is unreachable, refuses tokens clearly, and loads the keys once it is up', async () => {
    const idp = await provider();
    const bearer = await idp.userToken(USER);
    await idp.stop();

    const log = capturedLog();
    const app = await appFor(idp, log.logger);
    const ready = await readiness(app);
    expect(ready.ok).toBe(false);
    expect(ready.checks).toMatchObject({ authKeys: false, database: true });
    const before = await rowCounts(db);
    expect(outcome(await gql(app, LEAVE, undefined, bearer))).toBe(
      "UNAUTHENTICATED: Not authenticated: the identity provider's signing keys are not loaded yet; try again shortly.",
    );
    expect(await rowCounts(db)).toBe(before);
    expect(await metric(app, 'community_auth_keys_loaded')).toBe(0);
    expect(await metric(app, 'community_auth_verifications_total', { outcome: 'keys_unavailable' })).toBe(1);

    await eventually(() =>
      log.entries.some((entry) => entry.msg === 'identity provider keys not available yet' && /ECONNREFUSED/.test(entry.problem)),
    );

    await idp.resume();
    await eventually(async () => (await readiness(app)).ok);
    expect(outcome(await gql(app, STATUS, undefined, bearer))).toBe('ok');
    expect(log.entries.some((entry) => entry.msg === 'identity provider keys loaded')).toBe(true);
  });

  it('accepts a new kid after the provider rotates, and refuses the old key once it is removed', async () => {
    const [first, second] = [signingKey('key-1'), signingKey('key-2')];
    const idp = await provider([first]);
    const app = await appFor(idp);
    await eventually(async () => (await readiness(app)).ok);
    const old = await idp.userToken(USER);
    expect(kid(old)).toBe('key-1');
    expect(outcome(await gql(app, STATUS, undefined, old))).toBe('ok');

    idp.rotate([second, first]);
    const rotated = await idp.userToken(USER);
    expect(kid(rotated)).toBe('key-2');
    // An unknown kid makes the app refetch the key set (at most once per cooldown).
    await eventually(async () => outcome(await gql(app, STATUS, undefined, rotated)) === 'ok');
    expect(outcome(await gql(app, STATUS, undefined, old))).toBe('ok');

    idp.rotate([second]);
    // Noticed when the key set's max-age runs out, even for a token verified (and remembered) before.
    await eventually(async () => outcome(await gql(app, STATUS, undefined, old)) !== 'ok');
    expect(outcome(await gql(app, STATUS, undefined, old))).toBe(
      "UNAUTHENTICATED: Not authenticated: no key of the identity provider matches the token's kid and alg.",
    );
    expect(outcome(await gql(app, STATUS, undefined, rotated))).toBe('ok');
  });

  it('keeps verifying with cached keys while the provider is down; an unknown kid is refused and writes nothing', async () => {
    const idp = await provider([signingKey('key-1')]);
    const app = await appFor(idp);
    await eventually(async () => (await readiness(app)).ok);
    const used = await idp.userToken(USER);
    const unused = await idp.userToken(USER);
    expect(outcome(await gql(app, STATUS, undefined, used))).toBe('ok');
    // A token from a key this deployment's provider never served (another provider's key-9).
    const stranger = await (await provider([signingKey('key-9')])).userToken(USER);

    await idp.stop();
    const failuresBefore = await metric(app, 'community_auth_jwks_fetch_failures_total');
    await eventually(async () => (await metric(app, 'community_auth_jwks_fetch_failures_total')) > failuresBefore);

    // Never verified before, so this is a fresh verification with the cached key.
    expect(outcome(await gql(app, STATUS, undefined, unused))).toBe('ok');
    expect((await readiness(app)).checks.authKeys).toBe(true);
    const before = await rowCounts(db);
    expect(outcome(await gql(app, LEAVE, undefined, stranger))).toBe(
      "UNAUTHENTICATED: Not authenticated: no key of the identity provider matches the token's kid and alg.",
    );
    expect(await rowCounts(db)).toBe(before);
    await idp.resume();
  });
});

describe('a subscription whose token expires', () => {
  it('gets one UNAUTHENTICATED error, then completes', async () => {
    const idp = await provider();
    const app = await appFor(idp);
    await eventually(async () => (await readiness(app)).ok);
    const bearer = await idp.userToken(USER, '', RESOURCES.shortLived);
    const { exp, iat } = JSON.parse(Buffer.from(bearer.split('.')[1]!, 'base64url').toString());
    expect(exp - iat).toBe(SHORT_LIVED_SECONDS);

    const stream = await subscribe(app, `subscription { communityLayerStatusChanged { userId status } }`, {}, bearer);
    expect(stream.status).toBe(200);
    expect((await stream.next())?.data).toEqual({ data: { communityLayerStatusChanged: { userId: '5150', status: 'ACTIVE' } } });
    const last = await stream.next();
    expect(
      last?.data.errors.map((error: { message: string; extensions: { code: string } }) => [error.extensions.code, error.message]),
    ).toEqual([['UNAUTHENTICATED', 'Not authenticated: the token has expired; subscribe again with a fresh token.']]);
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000);
    expect((await stream.next())?.event).toBe('complete');
    expect(await stream.next()).toBeNull();
    await eventually(() => app.services.statusFeed.subscribers === 0);
  });
});
