import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { gql, startCluster, token, type Cluster } from './support/harness.js';

const STATUS = `query ($userId: UInt64) { communityLayerStatus(userId: $userId) { status history { leaveConsent { reason } } } }`;
const REJOIN = `mutation { rejoinCommunityLayer { status } }`;

let cluster: Cluster;
let honoring: App;
let ignoring: App;
beforeAll(async () => {
  cluster = await startCluster([]);
  honoring = await cluster.startInstance({ GLOBAL_PRIVACY_CONTROL_LEAVES: 'true' });
  ignoring = await cluster.startInstance();
  cluster.apps.push(honoring, ignoring);
});
afterAll(() => cluster?.stop());

/** One operation over real HTTP with `Sec-GPC: 1`, as a browser with Global Privacy Control on sends it. */
async function withGpc(app: App, query: string, bearer: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}`, 'sec-gpc': '1' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: any; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return body.data;
}

async function history(userId: string) {
  return (await gql(honoring, STATUS, { userId })).data!.communityLayerStatus;
}

describe('Global Privacy Control (GLOBAL_PRIVACY_CONTROL_LEAVES)', () => {
  it('off (the default): Sec-GPC changes nothing', async () => {
    const own = await token('6001');
    expect((await withGpc(ignoring, STATUS, own)).communityLayerStatus).toEqual({ status: 'ACTIVE', history: [] });
    expect(await history('6001')).toEqual({ status: 'ACTIVE', history: [] });
  });

  it('on: the user leaves before the operation runs, once, and a later rejoin stands', async () => {
    const own = await token('6002');
    const left = { status: 'LEFT', history: [{ leaveConsent: { reason: 'GLOBAL_PRIVACY_CONTROL' } }] };
    expect((await withGpc(honoring, STATUS, own)).communityLayerStatus).toEqual(left);
    expect((await withGpc(honoring, STATUS, own)).communityLayerStatus).toEqual(left);
    // The user chooses to rejoin from the same browser: that choice is recorded, and not undone.
    expect(await withGpc(honoring, REJOIN, own)).toEqual({ rejoinCommunityLayer: { status: 'ACTIVE' } });
    expect((await withGpc(honoring, STATUS, own)).communityLayerStatus.status).toBe('ACTIVE');
    expect((await history('6002')).history).toHaveLength(1);
  });

  it('on: a service token carrying Sec-GPC leaves nobody', async () => {
    const service = await token('svc', 'community:admin', '1h');
    // `sub` not a user id: a service caller, acting for no user of its own.
    await withGpc(honoring, STATUS, service, { userId: '6003' });
    expect(await history('6003')).toEqual({ status: 'ACTIVE', history: [] });
  });
});
