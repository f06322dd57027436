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
useCluster(
  [{}, {}],
  (cluster) =>
    ({
      databaseUrl,
      db,
      apps: [a, b],
    } = cluster as Cluster & { apps: [App, App] }),
);

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
    // Five users with four streams each: within the per-user cap.
    const users = ['602', '604', '605', '606', '607'];
    const streams = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => subscribe(b, WATCH, {}, await token(users[i % users.length]!))),
    );
    await Promise.all(streams.map((stream) => stream.next()));
    expect(b.services.statusFeed.subscribers).toBe(20);
    expect(b.services.statusFeed.watchedUsers).toBe(5);
    for (const stream of streams) stream.close();
    await eventually(() => b.services.statusFeed.subscribers === 0 && b.services.statusFeed.watchedUsers === 0);
  });

  it('ends on server shutdown as a dropped connection, never with complete, and refuses new streams with 503 SHUTTING_DOWN', async () => {
    const c = await startApp(databaseUrl);
    const stream = await subscribe(c, WATCH, {}, await token('603'));
    expect((await stream.next())?.data.data.communityLayerStatusChanged.status).toBe('ACTIVE');
    // What stop() does first, once readiness has been false for the grace period.
    c.services.statusFeed.close();
    // The body ends with no event at all: graphql-sse retries that, where it takes `complete` as the end.
    expect(await stream.next()).toBeNull();
    const refused = await subscribe(c, WATCH, {}, await token('603'));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect((await refused.next())?.data.errors[0].extensions).toMatchObject({ code: 'SHUTTING_DOWN', retryAfterSeconds: 1 });
    await c.stop();
    expect(c.services.statusFeed.subscribers).toBe(0);
  });
});

type Stream = Awaited<ReturnType<typeof subscribe>>;

async function openStreams(app: App, userIds: string[], query = WATCH): Promise<Stream[]> {
  const streams = await Promise.all(userIds.map(async (userId) => subscribe(app, query, {}, await token(userId))));
  for (const stream of streams) expect((await stream.next())?.data.data.communityLayerStatusChanged).toBeTruthy();
  return streams;
}

/** The refusal as a client sees it: the HTTP status, Retry-After, then one error event and the end. */
async function expectRefused(stream: Stream, status: number, limit: string, retryAfter = '1') {
  expect(stream.status).toBe(status);
  // RETRY_AFTER_SECONDS, like every other retryable answer (the harness keeps its default, 1).
  expect(stream.headers.get('retry-after')).toBe(retryAfter);
  const event = await stream.next();
  expect(event?.data.data ?? null).toBeNull();
  expect(event?.data.errors[0].extensions).toMatchObject({ code: 'TOO_MANY_SUBSCRIPTIONS', limit });
  expect((await stream.next())?.event).toBe('complete');
}

async function metric(app: App, name: string, labels: Record<string, string> = {}): Promise<number> {
  const found = await app.services.metrics.registry.getSingleMetric(name)?.get();
  const value = found?.values.find((entry) => Object.entries(labels).every(([key, label]) => entry.labels[key] === label));
  return value?.value ?? 0;
}

describe('subscription caps', () => {
  it('refuses a ninth stream watching one user with 429 TOO_MANY_SUBSCRIPTIONS, and admits again once one closes', async () => {
    const eight = await openStreams(
      b,
      Array.from({ length: 8 }, () => '610'),
    );
    const refusedBefore = await metric(b, 'community_subscriptions_refused_total', { limit: 'perUser' });
    await expectRefused(await subscribe(b, WATCH, {}, await token('610')), 429, 'perUser');
    // The cap is per watched user, whoever asks: an admin is refused too, another user is not.
    await expectRefused(await subscribe(b, WATCH, { u: '610' }, await token('9', 'community:admin')), 429, 'perUser');
    const [other] = await openStreams(b, ['611']);
    expect(await metric(b, 'community_subscriptions_refused_total', { limit: 'perUser' })).toBe(refusedBefore + 2);

    eight[0]!.close();
    await eventually(() => b.services.statusFeed.subscribers === 8);
    const [again] = await openStreams(b, ['610']);
    for (const stream of [...eight, other!, again!]) stream.close();
    await eventually(() => b.services.statusFeed.subscribers === 0);
  });

  it('refuses streams beyond the instance cap with 503 TOO_MANY_SUBSCRIPTIONS', async () => {
    const c = await startApp(databaseUrl, { SUBSCRIPTIONS_MAX: '3', RETRY_AFTER_SECONDS: '7' });
    try {
      const three = await openStreams(c, ['620', '621', '621']);
      await expectRefused(await subscribe(c, WATCH, {}, await token('622')), 503, 'perInstance', '7');
      expect(await metric(c, 'community_subscriptions_refused_total', { limit: 'perInstance' })).toBe(1);
      three[2]!.close();
      await eventually(() => c.services.statusFeed.subscribers === 2);
      const [fourth] = await openStreams(c, ['622']);
      for (const stream of [...three, fourth!]) stream.close();
    } finally {
      await c.stop();
    }
  });
});

describe('subscription reads', () => {
  const POOL_ACQUIRES = 'community_db_pool_acquires_total';

  it('one change of a user is one database read, shared by all of their subscribers', async () => {
    // No backstop resync during the test: every pool checkout of this instance is the feed's.
    const c = await startApp(databaseUrl, { CACHE_RESYNC_MS: '3600000' });
    try {
      const query = `subscription { communityLayerStatusChanged { status leaveCount history { leftAtNs } newest: history(last: 1) { leftAtNs } } }`;
      const streams = await openStreams(
        c,
        Array.from({ length: 8 }, () => '630'),
        query,
      );
      const before = await metric(c, POOL_ACQUIRES);
      const left = (await gql(a, `mutation { leaveCommunityLayer(userId: "630") { leftAtNs } }`)).data!.leaveCommunityLayer;
      for (const stream of streams) {
        expect((await stream.next())?.data.data.communityLayerStatusChanged).toEqual({
          status: 'LEFT',
          leaveCount: 1,
          history: [{ leftAtNs: left.leftAtNs }],
          newest: [{ leftAtNs: left.leftAtNs }],
        });
      }
      expect(await metric(c, POOL_ACQUIRES)).toBe(before + 1);
      for (const stream of streams) stream.close();
    } finally {
      await c.stop();
    }
  });

  it('a resync checks every watched user in one statement and wakes only those whose version moved', async () => {
    // No listener: changes made by SQL stay unheard until resync() is called by hand.
    const c = await startApp(databaseUrl, { CACHE_RESYNC_MS: '3600000' }, { membershipSync: false });
    try {
      const users = Array.from({ length: 10 }, (_, i) => String(640 + i));
      const streams = await openStreams(c, users);
      await db.query(`SELECT leave_community_layer(640), leave_community_layer(641)`);
      const before = await metric(c, POOL_ACQUIRES);
      const readsBefore = c.services.statusFeed.counters.reads;
      await c.services.membershipCache.resync();
      for (const stream of streams.slice(0, 2)) expect((await stream.next())?.data.data.communityLayerStatusChanged.status).toBe('LEFT');
      // One checkout for the cache's own snapshot, one for all ten subscribers.
      expect(await metric(c, POOL_ACQUIRES)).toBe(before + 2);
      expect(c.services.statusFeed.counters.reads).toBe(readsBefore + 1);

      // User 642 was not woken by that resync: its next event is its own later change.
      await db.query(`SELECT leave_community_layer(642)`);
      await c.services.membershipCache.resync();
      expect((await streams[2]!.next())?.data.data.communityLayerStatusChanged).toMatchObject({ userId: '642', status: 'LEFT' });
      for (const stream of streams) stream.close();
    } finally {
      await c.stop();
    }
  });
});
