import { SignJWT } from 'jose';
import { TEST_SECRET, token } from './harness.js';

/**
 * The authorization matrix of test/auth.test.ts: who calls (tokens of every kind, broken ones too),
 * each operation, and what each caller gets from each.
 */

export const SELF = '500';
const OTHER = '501';

function unsigned(claims: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ exp: Math.floor(Date.now() / 1000) + 600, ...claims })}.`;
}

export async function signedWith(secret: string, alg: string, claims: Record<string, unknown>, expiresIn = '10m'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg }).setIssuedAt().setExpirationTime(expiresIn).sign(Buffer.from(secret));
}

export type Caller =
  | 'anonymous'
  | 'self'
  | 'other user'
  | 'admin'
  | 'signal writer'
  | 'service'
  | 'no user id, no scopes'
  | 'expired'
  | 'no exp'
  | 'bad signature'
  | 'alg none'
  | 'wrong algorithm';

export async function credentials(): Promise<Record<Caller, string | null>> {
  return {
    anonymous: null,
    self: await token(SELF),
    'other user': await token(OTHER),
    admin: await token('900', 'community:admin'),
    'signal writer': await token('901', 'signals:write'),
    // A client-credentials token: the provider's client id in sub, so no user id.
    service: await token('backend@clients', 'community:admin signals:write'),
    'no user id, no scopes': await token('auth0|64f1c0ffee'),
    expired: await signedWith(TEST_SECRET, 'HS256', { sub: SELF }, '-5m'),
    'no exp': await new SignJWT({ sub: SELF, scope: 'community:admin signals:write' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(Buffer.from(TEST_SECRET)),
    'bad signature': await signedWith('another-secret-another-secret-another-secret', 'HS256', { sub: SELF }),
    'alg none': unsigned({ sub: SELF, scope: 'community:admin signals:write' }),
    'wrong algorithm': await signedWith(TEST_SECRET, 'HS512', { sub: SELF, scope: 'community:admin signals:write' }),
  };
}

const signalInput = { userId: SELF, itemId: 'auth-item', kind: 'VIEW', context: { cohortIds: ['auth-cohort'] } };

export const operations: Record<string, { query: string; variables?: Record<string, unknown> }> = {
  'status(userId)': { query: `query ($u: UInt64) { communityLayerStatus(userId: $u) { userId status } }`, variables: { u: SELF } },
  'status()': { query: `{ communityLayerStatus { userId status } }` },
  'leave(userId)': { query: `mutation ($u: UInt64) { leaveCommunityLayer(userId: $u) { status } }`, variables: { u: SELF } },
  'leave()': { query: `mutation { leaveCommunityLayer { userId status } }` },
  'rejoin(userId)': { query: `mutation ($u: UInt64) { rejoinCommunityLayer(userId: $u) { status } }`, variables: { u: SELF } },
  signal: { query: `mutation ($i: SignalInput!) { signal(input: $i) { forwarded } }`, variables: { i: signalInput } },
  signals: { query: `mutation ($i: [SignalInput!]!) { signals(inputs: $i) { forwarded } }`, variables: { i: [signalInput, signalInput] } },
  validateSignal: { query: `mutation ($i: SignalInput!) { validateSignal(input: $i) }`, variables: { i: signalInput } },
  communityItemAggregate: { query: `{ communityItemAggregate(itemId: "auth-item") { signalCount } }` },
  cohortItemAggregate: { query: `{ cohortItemAggregate(cohortId: "auth-cohort", itemId: "auth-item") { signalCount } }` },
  communityContributions: {
    query: `query ($u: UInt64!) { communityContributions(userId: $u) { edges { node { signalId } } } }`,
    variables: { u: SELF },
  },
};

type Outcome = 'ok' | 'FORBIDDEN' | 'UNAUTHENTICATED' | 'BAD_USER_INPUT';
const UNAUTHENTICATED_ROW: Outcome[] = Array(11).fill('UNAUTHENTICATED');

// Columns follow `operations` above.
export const expected: Record<Caller, Outcome[]> = {
  //                 status(u) status() leave(u) leave() rejoin(u) signal  signals validate aggC  aggCo  contributions
  anonymous: UNAUTHENTICATED_ROW,
  self: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok'],
  'other user': ['FORBIDDEN', 'ok', 'FORBIDDEN', 'ok', 'FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN', 'ok', 'ok', 'FORBIDDEN'],
  admin: ['ok', 'ok', 'ok', 'ok', 'ok', 'FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN', 'ok', 'ok', 'ok'],
  'signal writer': ['FORBIDDEN', 'ok', 'FORBIDDEN', 'ok', 'FORBIDDEN', 'ok', 'ok', 'ok', 'ok', 'ok', 'FORBIDDEN'],
  service: ['ok', 'BAD_USER_INPUT', 'ok', 'BAD_USER_INPUT', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok'],
  'no user id, no scopes': [
    'FORBIDDEN',
    'FORBIDDEN',
    'FORBIDDEN',
    'FORBIDDEN',
    'FORBIDDEN',
    'FORBIDDEN',
    'FORBIDDEN',
    'FORBIDDEN',
    'ok',
    'ok',
    'FORBIDDEN',
  ],
  expired: UNAUTHENTICATED_ROW,
  'no exp': UNAUTHENTICATED_ROW,
  'bad signature': UNAUTHENTICATED_ROW,
  'alg none': UNAUTHENTICATED_ROW,
  'wrong algorithm': UNAUTHENTICATED_ROW,
};
