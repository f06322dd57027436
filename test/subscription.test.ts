import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, gql, startApp, token, type Cluster, useCluster } from './support/harness.js';
import { subscribe } from './support/sse.js';

const WATCH = `subscription ($u: UInt64) { communityLayerStatusChanged(userId: $u) { userId status leftAtNs history { leftAtNs rejoinedAtNs } } }`;

let databaseUrl: string;
let a: App;
let b: App;
let db: pg.Client;
useCluster([{}, {}], (cluster) => ({ databaseUrl, db, apps: [a, b] } = cluster as Cluster & { apps: [App, App] }));

describe('communityLayerStatusChanged', () => {
  it('emits the current state, then changes made on another instance and by SQL', async () => {
    const stream = await subscribe(b, WATCH, {}, await token('600'));
    expect(stream.status).toBe(200);
    expect((await stream.next())?.data.data.communityLayerStatusChanged).toMatchObject({ userId: '600', status: 'ACTIVE' });

    const left = (await gql(a, `mutation { leaveCommunityLayer(userId: "600") { leftAtNs } }`)).data!.leaveCommunityLayer;
    const leftEvent = (await stream.next())?.data.data.communityLayerStatusChanged;
    expect(leftEvent).toMatchObject({ status: 'LEFT', leftAtNs: left.leftAtNs });
    expect(leftEvent.history).toHaveLength(1);

    await gql(a, `mutation { rejoinCommunityLayer(userId: "600") { status } }`);
    expect((await stream.next())?.data.data.communityLayerStatusChanged.status).toBe('ACTIVE');

    await db.query(`SELECT leave_community_layer(600)`);
    expect((await stream.next())?.data.data.communityLayerStatusChanged.status).toBe('LEFT');
    stream.close();
  });

  it('has the same authorization as communityLayerStatus', async () => {
    const other = await subscribe(b, WATCH, { u: '600' }, await token('601'));
    expect((await other.next())?.data.errors[0].extensions.code).toBe('FORBIDDEN');
    other.close();
    const anonymous = await subscribe(b, WATCH, { u: '600' }, null);
    expect((await anonymous.next())?.data.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    anonymous.close();
    const admin = await subscribe(b, WATCH, { u: '600' }, await token('9', 'community:admin'));
    expect((await admin.next())?.data.data.communityLayerStatusChanged.userId).toBe('600');
    admin.close();
  });

  it('lets go of clients that vanish', async () => {
    await eventually(() => b.services.statusFeed.subscribers === 0);
    const before = 0;
    const streams = await Promise.all(Array.from({ length: 20 }, async () => subscribe(b, WATCH, {}, await token('602'))));
    await Promise.all(streams.map((stream) => stream.next()));
    expect(b.services.statusFeed.subscribers).toBe(before + 20);
    for (const stream of streams) stream.close();
    await eventually(() => b.services.statusFeed.subscribers === before);
  });

  it('ends cleanly on server shutdown', async () => {
    const c = await startApp(databaseUrl);
    const stream = await subscribe(c, WATCH, {}, await token('603'));
    expect((await stream.next())?.data.data.communityLayerStatusChanged.status).toBe('ACTIVE');
    await c.stop();
    let last = await stream.next();
    while (last && last.event !== 'complete') last = await stream.next();
    expect(c.services.statusFeed.subscribers).toBe(0);
  });
});
