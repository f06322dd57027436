import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, gql, rowCounts, startCluster, token, type Cluster } from './support/harness.js';
import { receiver, type Receiver } from './support/webhook-receivers.js';

const CONSENT = 'reason reasonText policyVersion';
const CHANGE = `($userId: UInt64, $reason: ConsentReason, $reasonText: String, $policyVersion: String) {
  CHANGE(userId: $userId, reason: $reason, reasonText: $reasonText, policyVersion: $policyVersion) { status } }`;
const LEAVE = `mutation ${CHANGE.replace('CHANGE', 'leaveCommunityLayer')}`;
const REJOIN = `mutation ${CHANGE.replace('CHANGE', 'rejoinCommunityLayer')}`;
const HISTORY = `query ($userId: UInt64!) { communityLayerStatus(userId: $userId) {
  history { leftAtNs leaveConsent { ${CONSENT} } rejoinConsent { ${CONSENT} } } } }`;
const FEED = `{ communityMembershipChangePage(first: 1000) { changes { kind userId consent { ${CONSENT} } signedLeaveReceipt } } }`;
const RECEIPT = `query ($userId: UInt64!) { communityLayerStatus(userId: $userId) { signedLeaveReceipt } }`;

/** A receipt's claims (its signature is test/receipts' business). */
const claims = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString());

let cluster: Cluster;
let app: App;
let db: pg.Client;
let hook: Receiver;
const bodies: any[] = [];

beforeAll(async () => {
  hook = await receiver((_req, res, _nth, body) => {
    bodies.push(JSON.parse(body));
    res.writeHead(204).end();
  });
  cluster = await startCluster([{}], 'direct', { WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1', WEBHOOK_POLL_MS: '100' });
  ({ db } = cluster);
  app = cluster.apps[0]!;
  const registered = await gql(
    app,
    `mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventKinds: [LEFT, REJOINED]) { secret } }`,
    {
      url: hook.url,
    },
  );
  expect(registered.errors).toBeUndefined();
});
afterAll(async () => {
  await cluster?.stop();
  await hook?.close();
});

async function ok(query: string, variables: Record<string, unknown>, bearer?: string) {
  const response = await gql(app, query, variables, bearer);
  expect(response.errors).toBeUndefined();
  return response.data!;
}

async function feedChanges(userId: string) {
  const { changes } = (await ok(FEED, {}, await token('warehouse', 'community:feed', '1h'))).communityMembershipChangePage;
  return changes.filter((change: { userId: string }) => change.userId === userId);
}

describe('why, from where, under which policy', () => {
  it('a leave with a reason and policy version shows in status history, a feed event and a webhook delivery', async () => {
    const own = await token('5001');
    const consent = { reason: 'CONSENT_PLATFORM', reasonText: 'OneTrust sync, ticket #42', policyVersion: '2026-11' };
    expect(await ok(LEAVE, consent, own)).toEqual({ leaveCommunityLayer: { status: 'LEFT' } });
    // Leaving again changes nothing and records nothing: the first reason stays.
    await ok(LEAVE, { reason: 'ADMIN', reasonText: 'again' }, own);
    // Omitted with the user's own token: USER_REQUEST.
    await ok(REJOIN, {}, own);

    const { history } = (await ok(HISTORY, { userId: '5001' })).communityLayerStatus;
    expect(history).toEqual([
      {
        leftAtNs: expect.any(String),
        leaveConsent: consent,
        rejoinConsent: { reason: 'USER_REQUEST', reasonText: null, policyVersion: null },
      },
    ]);
    expect(await feedChanges('5001')).toMatchObject([
      { kind: 'LEFT', userId: '5001', consent },
      { kind: 'REJOINED', userId: '5001', consent: { reason: 'USER_REQUEST', reasonText: null, policyVersion: null } },
    ]);
    await eventually(async () => bodies.filter((body) => body.data.userId === '5001').length === 2);
    const left = bodies.find((body) => body.data.userId === '5001' && body.data.kind === 'LEFT');
    expect(left).toMatchObject({ type: 'community.membership.left', data: { userId: '5001', consent } });
    const [leftChange] = await feedChanges('5001');
    expect(claims(leftChange.signedLeaveReceipt)).toMatchObject({ receipt: 'leave', userId: '5001', ...consent });
  });

  it("an admin's leave of another user defaults to ADMIN", async () => {
    await ok(LEAVE, { userId: '5002' });
    const { history } = (await ok(HISTORY, { userId: '5002' })).communityLayerStatus;
    expect(history[0].leaveConsent).toEqual({ reason: 'ADMIN', reasonText: null, policyVersion: null });
    expect((await feedChanges('5002'))[0].consent).toEqual({ reason: 'ADMIN', reasonText: null, policyVersion: null });
    const { signedLeaveReceipt } = (await ok(RECEIPT, { userId: '5002' })).communityLayerStatus;
    expect(claims(signedLeaveReceipt)).toMatchObject({ receipt: 'leave', userId: '5002', reason: 'ADMIN' });
  });

  it('an oversized or control-character reasonText or policyVersion gets BAD_USER_INPUT and writes nothing', async () => {
    const before = await rowCounts(db);
    const events = async () => (await db.query('SELECT count(*)::int AS n FROM membership_event')).rows[0].n;
    const eventsBefore = await events();
    for (const [query, variables, argument] of [
      [LEAVE, { userId: '5003', reasonText: 'x'.repeat(501) }, 'reasonText'],
      [LEAVE, { userId: '5003', reasonText: 'line\nbreak' }, 'reasonText'],
      [LEAVE, { userId: '5003', policyVersion: 'v'.repeat(65) }, 'policyVersion'],
      [LEAVE, { userId: '5003', reasonText: '' }, 'reasonText'],
      [REJOIN, { userId: '5001', policyVersion: 'v\u0007' }, 'policyVersion'],
    ] as const) {
      const response = await gql(app, query, variables);
      expect(response.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
      expect(response.errors?.[0]?.message).toContain(argument);
    }
    expect(await rowCounts(db)).toBe(before);
    expect(await events()).toBe(eventsBefore);
    // At the bounds, accepted.
    await ok(LEAVE, { userId: '5003', reasonText: 'x'.repeat(500), policyVersion: 'v'.repeat(64) });
  });
});
