import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { capturedLog, eventually, gql, metric, readiness, rowCounts } from './support/harness.js';
import type { IdentityProvider } from './support/identity-provider.js';
import { decode, handSigned, hs256Signed, publicKeySecrets } from './support/jwt-parts.js';
import { codes, problems } from './support/graphql-errors.js';
import { oidcInstance, useIdentityProviderApp } from './support/oidc-app.js';
import { AUDIENCE, RESOURCES, signingKey, USER_ID_CLAIM } from './support/identity-provider-configuration.js';

/**
 * Tokens from a real OpenID provider (oidc-provider, in this process, over HTTP): discovery,
 * the JWKS, claim mapping, service callers, and tokens that must be refused.
 */

const key = signingKey('key-1');
const accounts = {
  'auth0|64f1c0ffee': '4242',
  'numeric-id-user': 4343,
  'no-app-id': undefined,
  'bad-app-id': '0042',
};

let idp: IdentityProvider;
let databaseUrl: string;
let app: App;
let db: pg.Client;
useIdentityProviderApp({ keys: [key], accounts }, (started) => ({ idp, databaseUrl, app, db } = started));

const STATUS = `{ communityLayerStatus { userId status } }`;
const STATUS_OF = `query ($u: UInt64) { communityLayerStatus(userId: $u) { userId status } }`;
const LEAVE_OF = `mutation ($u: UInt64) { leaveCommunityLayer(userId: $u) { userId status } }`;
const SIGNAL = `mutation ($i: SignalInput!) { signal(input: $i) { forwarded } }`;
const CONTRIBUTIONS = `query ($u: UInt64!) { communityContributions(userId: $u) { edges { node { itemId } } } }`;

describe('an OpenID provider found by discovery', () => {
  it('loads the keys its discovery document names, and says so in /readyz and /metrics', async () => {
    const ready = await readiness(app);
    expect(ready.checks.authKeys).toBe(true);
    expect(await metric(app, 'community_auth_keys_loaded')).toBe(1);
    expect(await metric(app, 'community_auth_jwks_fetches_total')).toBeGreaterThanOrEqual(1);
  });

  it('never loads keys when the discovery document names another issuer', async () => {
    // Same provider, but configured with a trailing slash: discovery answers, with a different issuer.
    const log = capturedLog();
    const mismatched = await oidcInstance(databaseUrl, idp, { AUTH_OIDC_ISSUER: `${idp.issuer}/` }, log.logger);
    await eventually(() =>
      log.entries.some(
        (entry) =>
          entry.msg === 'identity provider keys not available yet' &&
          /names the issuer "http:.*", not AUTH_OIDC_ISSUER/.test(entry.problem),
      ),
    );
    const response = await gql(mismatched, STATUS, undefined, await idp.userToken('auth0|64f1c0ffee'));
    expect(response.status).toBeLessThan(500);
    expect(problems(response)).toEqual([
      ['UNAUTHENTICATED', "Not authenticated: the identity provider's signing keys are not loaded yet; try again shortly."],
    ]);
    expect((await readiness(mismatched)).checks.authKeys).toBe(false);
  });

  it('works with AUTH_JWKS_URL and AUTH_JWT_ISSUER instead of discovery', async () => {
    const direct = await oidcInstance(databaseUrl, idp, { AUTH_OIDC_ISSUER: '', AUTH_JWKS_URL: idp.jwksUri, AUTH_JWT_ISSUER: idp.issuer });
    await eventually(async () => (await readiness(direct)).checks.authKeys === true);
    const response = await gql(direct, STATUS, undefined, await idp.userToken('auth0|64f1c0ffee'));
    expect(response.data?.communityLayerStatus).toEqual({ userId: '4242', status: 'ACTIVE' });
  });
});

describe('claim mapping', () => {
  it('takes the user id from a namespaced claim (sub is the provider’s own id)', async () => {
    const bearer = await idp.userToken('auth0|64f1c0ffee');
    expect(decode(bearer)).toMatchObject({ sub: 'auth0|64f1c0ffee', [USER_ID_CLAIM]: '4242', aud: AUDIENCE, iss: idp.issuer });
    expect((await gql(app, STATUS, undefined, bearer)).data?.communityLayerStatus).toEqual({ userId: '4242', status: 'ACTIVE' });
    expect(codes(await gql(app, STATUS_OF, { u: '4343' }, bearer))).toEqual(['FORBIDDEN']);
  });

  it('accepts a JSON integer user id', async () => {
    const bearer = await idp.userToken('numeric-id-user');
    expect(decode(bearer)[USER_ID_CLAIM]).toBe(4343);
    expect((await gql(app, STATUS, undefined, bearer)).data?.communityLayerStatus).toEqual({ userId: '4343', status: 'ACTIVE' });
  });

  it('refuses a token whose user id claim is not a UInt64, naming the claim', async () => {
    const response = await gql(app, STATUS, undefined, await idp.userToken('bad-app-id'));
    expect(codes(response)).toEqual(['UNAUTHENTICATED']);
    expect(response.errors?.[0]?.message).toContain(`"${USER_ID_CLAIM}" claim must be a UInt64`);
  });

  it('lets users read their own contributions, not anyone else’s', async () => {
    const bearer = await idp.userToken('auth0|64f1c0ffee');
    const signal = await gql(app, SIGNAL, { i: { userId: '4242', itemId: 'oidc-item', kind: 'LIKE' } }, bearer);
    expect(signal.data?.signal).toEqual({ forwarded: true });
    const own = await gql(app, CONTRIBUTIONS, { u: '4242' }, bearer);
    expect(own.data?.communityContributions.edges).toEqual([{ node: { itemId: 'oidc-item' } }]);
    expect(codes(await gql(app, CONTRIBUTIONS, { u: '4343' }, bearer))).toEqual(['FORBIDDEN']);
  });

  it.each([
    ['scope (a space-separated string)', 'backend', 'scope'],
    ['scp (an array, as Okta)', 'okta-style-backend', 'scp'],
    ['permissions (an array, as Auth0)', 'auth0-style-backend', 'permissions'],
  ] as const)('reads scopes from %s', async (_label, client, claim) => {
    const writer = await idp.clientCredentialsToken(client, 'signals:write');
    const payload = decode(writer);
    expect(payload[claim]).toEqual(claim === 'scope' ? 'signals:write' : ['signals:write']);
    expect(Object.keys(payload).filter((name) => ['scope', 'scp', 'permissions'].includes(name))).toEqual([claim]);
    const signal = await gql(app, SIGNAL, { i: { userId: '777', itemId: `scoped-${claim}`, kind: 'VIEW' } }, writer);
    expect(signal.data?.signal).toEqual({ forwarded: true });
    // signals:write is not community:admin.
    expect(codes(await gql(app, LEAVE_OF, { u: '777' }, writer))).toEqual(['FORBIDDEN']);
  });
});

describe('service callers (client-credentials tokens)', () => {
  it('act within their scopes, always naming the user', async () => {
    const admin = await idp.clientCredentialsToken('backend', 'community:admin');
    expect(decode(admin)).toMatchObject({ sub: 'backend', client_id: 'backend', scope: 'community:admin' });
    expect(decode(admin)[USER_ID_CLAIM]).toBeUndefined();
    const left = await gql(app, LEAVE_OF, { u: '880' }, admin);
    expect(left.data?.leaveCommunityLayer).toEqual({ userId: '880', status: 'LEFT' });
    expect((await gql(app, CONTRIBUTIONS, { u: '4242' }, admin)).errors).toBeUndefined();

    const before = await rowCounts(db);
    const unnamed = await gql(app, `mutation { leaveCommunityLayer { userId } }`, undefined, admin);
    expect(problems(unnamed)).toEqual([['BAD_USER_INPUT', 'userId is required for service callers']]);
    expect(await rowCounts(db)).toBe(before);
  });

  it('without scopes are FORBIDDEN except what any authenticated caller may do', async () => {
    const bare = await idp.clientCredentialsToken('backend', '');
    expect(decode(bare).scope).toBeUndefined();
    const before = await rowCounts(db);
    expect(codes(await gql(app, LEAVE_OF, { u: '881' }, bare))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(app, STATUS, undefined, bare))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(app, SIGNAL, { i: { userId: '881', itemId: 'x', kind: 'VIEW' } }, bare))).toEqual(['FORBIDDEN']);
    expect(await rowCounts(db)).toBe(before);
    expect((await gql(app, `{ communityItemAggregate(itemId: "oidc-item") { signalCount } }`, undefined, bare)).errors).toBeUndefined();
  });

  it('a user without an app user id is treated the same way', async () => {
    const response = await gql(app, STATUS, undefined, await idp.userToken('no-app-id'));
    expect(codes(response)).toEqual(['FORBIDDEN']);
  });
});

describe('tokens that are refused', () => {
  // Hand-signed tokens use the private half of the key the provider serves (key-1): only the one
  // deliberate defect differs from what the provider issues. The control proves the rest is right.
  const claims = () => ({ [USER_ID_CLAIM]: '4242', iss: idp.issuer, aud: AUDIENCE });

  it.each([
    ['no exp', () => handSigned(key, claims(), key.alg, false), 'the token has no expiry (exp claim)'],
    ['wrong iss', () => handSigned(key, { ...claims(), iss: 'https://evil.example' }), "the token's iss claim is not accepted"],
    [
      'wrong aud (a real token for another API)',
      () => idp.userToken('auth0|64f1c0ffee', '', RESOURCES.otherApi),
      "the token's aud claim is not accepted",
    ],
    [
      'alg PS256 with the RS256 key',
      () => handSigned(key, claims(), 'PS256'),
      "no key of the identity provider matches the token's kid and alg",
    ],
  ])('%s', async (_label, mint, problem) => {
    const control = await gql(app, STATUS, undefined, await handSigned(key, claims()));
    expect(control.data?.communityLayerStatus).toEqual({ userId: '4242', status: 'ACTIVE' });
    const before = await rowCounts(db);
    const response = await gql(app, LEAVE_OF, { u: '4242' }, await mint());
    expect(response.status).toBeLessThan(500);
    expect(problems(response)).toEqual([['UNAUTHENTICATED', `Not authenticated: ${problem}.`]]);
    expect(await rowCounts(db)).toBe(before);
  });

  it('HS256 signed with the public key’s bytes (JWK as served, PEM, modulus)', async () => {
    const served = (await (await fetch(idp.jwksUri)).json()) as { keys: Record<string, string>[] };
    const jwk = served.keys.find((candidate) => candidate['kid'] === key.kid)!;
    for (const secret of publicKeySecrets(jwk)) {
      const forged = hs256Signed(secret, key.kid, { ...claims(), exp: Math.floor(Date.now() / 1000) + 300 });
      const response = await gql(app, STATUS, undefined, forged);
      expect(problems(response)).toEqual([['UNAUTHENTICATED', 'Not authenticated: the token is not signed with an accepted algorithm.']]);
    }
  });

  it('counts verifications by outcome', async () => {
    expect(await metric(app, 'community_auth_verifications_total', { outcome: 'verified' })).toBeGreaterThan(0);
    expect(await metric(app, 'community_auth_verifications_total', { outcome: 'algorithm_refused' })).toBeGreaterThanOrEqual(3);
    expect(await metric(app, 'community_auth_verifications_total', { outcome: 'claims_refused' })).toBeGreaterThan(0);
    expect(await metric(app, 'community_auth_verifications_total', { outcome: 'unknown_key' })).toBeGreaterThan(0);
  });
});
