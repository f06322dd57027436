import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { ConfigError, loadConfig } from '../src/config/config.js';
import { TEST_SECRET, gql, rowCounts, startApp, token, type Cluster, useCluster } from './support/harness.js';
import { SELF, signedWith, type Caller, credentials, operations, expected } from './support/authorization-matrix.js';

let databaseUrl: string;
let app: App;
let db: pg.Client;
useCluster(
  [{}],
  (cluster) =>
    ({
      databaseUrl,
      db,
      apps: [app],
    } = cluster as Cluster & { apps: [App] }),
);

describe('authorization matrix', () => {
  const cases = Object.entries(expected).flatMap(([caller, outcomes]) =>
    Object.keys(operations).map((operation, i) => [caller as Caller, operation, outcomes[i]!] as const),
  );

  it.each(cases)('%s × %s → %s', async (caller, operation, outcome) => {
    const bearer = (await credentials())[caller];
    const { query, variables } = operations[operation]!;
    const before = await rowCounts(db);
    const response = await gql(app, query, variables, bearer);
    expect(response.status).toBeLessThan(500);
    if (outcome === 'ok') {
      expect(response.errors).toBeUndefined();
    } else {
      expect(response.errors?.map((error) => error.extensions?.code)).toEqual([outcome]);
      if (outcome === 'BAD_USER_INPUT') expect(response.errors?.[0]?.message).toBe('userId is required for service callers');
      expect(await rowCounts(db)).toBe(before);
    }
  });

  it('omitting userId means the caller', async () => {
    const response = await gql(app, `mutation { leaveCommunityLayer { userId status } }`, undefined, await token('777'));
    expect(response.data!.leaveCommunityLayer).toEqual({ userId: '777', status: 'LEFT' });
  });

  it('treats a subject that is not a UInt64 as "no user id", and names no secret in errors', async () => {
    for (const sub of ['abc', '-1', '18446744073709551616']) {
      const bearer = await signedWith(TEST_SECRET, 'HS256', { sub });
      const own = await gql(app, `{ communityLayerStatus { status } }`, undefined, bearer);
      expect(own.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(own.errors?.[0]?.message).not.toContain(TEST_SECRET);
      expect((await gql(app, `{ communityItemAggregate(itemId: "x") { signalCount } }`, undefined, bearer)).errors).toBeUndefined();
    }
  });

  it('accepts a token without exp only when AUTH_ALLOW_NO_EXP=true', async () => {
    const lenient = await startApp(databaseUrl, { AUTH_ALLOW_NO_EXP: 'true' }, { membershipSync: false });
    try {
      const noExp = await new SignJWT({ sub: SELF }).setProtectedHeader({ alg: 'HS256' }).sign(Buffer.from(TEST_SECRET));
      const query = `{ communityLayerStatus { userId } }`;
      expect((await gql(app, query, undefined, noExp)).errors?.[0]?.message).toBe(
        'Not authenticated: the token has no expiry (exp claim).',
      );
      expect((await gql(lenient, query, undefined, noExp)).data?.communityLayerStatus).toEqual({ userId: SELF });
    } finally {
      await lenient.stop();
    }
  });

  it('refuses a token that lives longer than AUTH_TOKEN_MAX_LIFETIME_MS (24 h by default), from iat or from now, and writes nothing', async () => {
    const query = `mutation { leaveCommunityLayer { status } }`;
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT({ sub: SELF, ...claims }).setProtectedHeader({ alg: 'HS256' }).sign(Buffer.from(TEST_SECRET));
    const now = Math.floor(Date.now() / 1000);
    const tooLong = [
      await sign({ exp: 1e308 }),
      await sign({ iat: now, exp: now + 25 * 3600 }),
      // An old iat does not stretch the window: exp is also measured from now.
      await sign({ iat: now - 3600, exp: now + 24 * 3600 + 60 }),
    ];
    const before = await rowCounts(db);
    for (const jwt of tooLong) {
      const { errors } = await gql(app, query, undefined, jwt);
      expect(errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
      expect(errors?.[0]?.message).toMatch(/exp is more than 24 h after its iat or now/);
    }
    expect(await rowCounts(db)).toEqual(before);
    const withinDay = await sign({ iat: now, exp: now + 23 * 3600, scope: '' });
    expect((await gql(app, `{ communityLayerStatus { userId } }`, undefined, withinDay)).data?.communityLayerStatus).toEqual({
      userId: SELF,
    });
  });
});

describe('issued in the future', () => {
  it('refuses a token whose iat is beyond the clock tolerance, and writes nothing; accepts one within it', async () => {
    const sign = (iat: number) =>
      new SignJWT({ sub: SELF, scope: 'community:admin' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuedAt(iat)
        .setExpirationTime('1h')
        .sign(Buffer.from(TEST_SECRET));
    const now = Math.floor(Date.now() / 1000);
    const before = await rowCounts(db);
    for (const ahead of [365 * 86400, 3600, 120]) {
      const bearer = await sign(now + ahead);
      const { errors } = await gql(app, 'mutation { leaveCommunityLayer { status } }', undefined, bearer);
      expect(errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
      expect(errors?.[0]?.message).toBe(
        "Not authenticated: the token's iat is in the future (more than 30 s ahead of this server's clock).",
      );
    }
    expect(await rowCounts(db)).toEqual(before);
    const slightlyAhead = await gql(app, '{ communityLayerStatus { userId } }', undefined, await sign(now + 10));
    expect(slightlyAhead.data?.communityLayerStatus).toEqual({ userId: SELF });
  });
});

describe('issuer, audience and public keys', () => {
  it('checks iss and aud when configured', async () => {
    const strict = await startApp(
      databaseUrl,
      { AUTH_JWT_ISSUER: 'https://id.example', AUTH_JWT_AUDIENCE: 'community-layer' },
      { membershipSync: false },
    );
    try {
      const query = `{ communityLayerStatus { status } }`;
      const wrongIssuer = await signedWith(TEST_SECRET, 'HS256', { sub: SELF, iss: 'https://evil.example', aud: 'community-layer' });
      const right = await signedWith(TEST_SECRET, 'HS256', { sub: SELF, iss: 'https://id.example', aud: 'community-layer' });
      expect((await gql(strict, query, undefined, wrongIssuer)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect((await gql(strict, query, undefined, await token(SELF))).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect((await gql(strict, query, undefined, right)).errors).toBeUndefined();
    } finally {
      await strict.stop();
    }
  });

  it('verifies ES256 with a PEM public key and refuses HS256 tokens signed with that PEM as a secret', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const keyed = await startApp(databaseUrl, { AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: pem }, { membershipSync: false });
    try {
      const query = `{ communityLayerStatus { userId } }`;
      const good = await new SignJWT({ sub: SELF }).setProtectedHeader({ alg: 'ES256' }).setExpirationTime('5m').sign(privateKey);
      const confused = await signedWith(pem, 'HS256', { sub: SELF });
      expect((await gql(keyed, query, undefined, good)).data?.communityLayerStatus).toEqual({ userId: SELF });
      expect((await gql(keyed, query, undefined, confused)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    } finally {
      await keyed.stop();
    }
  });
});

describe('configuration', () => {
  const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://x@localhost/db' };

  it('refuses to start in production without a key, naming the variables', () => {
    expect(() => loadConfig(production)).toThrow(ConfigError);
    expect(() => loadConfig(production)).toThrow(/AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY, AUTH_JWKS_URL, AUTH_OIDC_ISSUER: one is required/);
  });

  it('takes exactly one key source', () => {
    expect(() => loadConfig({ AUTH_JWT_SECRET: TEST_SECRET, AUTH_JWKS_URL: 'https://id.example/jwks' })).toThrow(
      /AUTH_JWT_SECRET, AUTH_JWKS_URL: set exactly one of them/,
    );
  });

  it('requires issuer and audience in production with a remote key set, naming the variables', () => {
    expect(() => loadConfig({ ...production, AUTH_JWKS_URL: 'https://id.example/jwks' })).toThrow(
      /AUTH_JWT_ISSUER, AUTH_JWT_AUDIENCE: required in production with AUTH_JWKS_URL/,
    );
    expect(() => loadConfig({ ...production, AUTH_OIDC_ISSUER: 'https://id.example/' })).toThrow(
      /AUTH_JWT_AUDIENCE: required in production with AUTH_OIDC_ISSUER/,
    );
    expect(() => loadConfig({ ...production, AUTH_OIDC_ISSUER: 'http://id.example/', AUTH_JWT_AUDIENCE: 'api' })).toThrow(
      /AUTH_OIDC_ISSUER: must be an https URL in production/,
    );
    const config = loadConfig({ ...production, AUTH_OIDC_ISSUER: 'https://id.example/', AUTH_JWT_AUDIENCE: 'api' });
    expect(config.auth).toMatchObject({
      key: { kind: 'oidc', issuer: 'https://id.example/' },
      issuer: 'https://id.example/',
      audience: 'api',
    });
  });

  it('refuses a secret shorter than 32 bytes', () => {
    expect(() => loadConfig({ AUTH_JWT_SECRET: 'short' })).toThrow(/AUTH_JWT_SECRET: must be at least 32 bytes/);
  });
});
