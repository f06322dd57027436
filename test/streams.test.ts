import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, gql, metric, startCluster, token, type Cluster } from './support/harness.js';
import { subscribe } from './support/sse.js';

/**
 * Every subscription is bounded and ends (issue 25): purge-progress streams share the caps and the
 * gauge of status streams, are pushed from changes (one read per change, however many follow),
 * leave no database work behind their clients, and end at token expiry.
 */

const PROGRESS = `subscription ($u: UInt64) { communityPurgeProgress(userId: $u) { purgeId status removedSoFar } }`;
const WATCH = `subscription ($u: UInt64) { communityLayerStatusChanged(userId: $u) { status } }`;
type Stream = Awaited<ReturnType<typeof subscribe>>;

let cluster: Cluster;
let a: App;
let b: App;

async function withCluster(run: () => Promise<void>): Promise<void> {
  cluster = await startCluster([]);
  // Small chunks with a pause: a purge moves in many visible steps.
  const environment = { PURGE_CHUNK_SIZE: '40', PURGE_CHUNK_PAUSE_MS: '10', SUBSCRIPTIONS_PER_USER_MAX: '8' };
  a = await cluster.startInstance(environment);
  b = await cluster.startInstance(environment);
  try {
    await run();
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await cluster.stop();
  }
}

async function sendAndLeave(userId: string, count: number): Promise<void> {
  const inputs = Array.from({ length: count }, (_, i) => ({ userId, itemId: `stream-${i % 3}`, kind: 'LIKE' }));
  expect(
    (await gql(a, `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { forwarded } }`, { inputs })).errors,
  ).toBeUndefined();
  expect((await gql(a, `mutation { leaveCommunityLayer(userId: "${userId}") { status } }`)).errors).toBeUndefined();
}

async function requestPurge(userId: string): Promise<void> {
  const response = await gql(a, `mutation { purgeCommunityContributions(userId: "${userId}") { purgeId } }`);
  expect(response.errors).toBeUndefined();
}

/** Opens `count` progress streams on `app`, each admitted (holding a place) before the next. */
async function openProgress(app: App, userId: string, count: number): Promise<Stream[]> {
  const streams: Stream[] = [];
  for (let i = 0; i < count; i++) {
    const before = app.services.statusFeed.subscribers;
    streams.push(await subscribe(app, PROGRESS, {}, await token(userId)));
    await eventually(() => app.services.statusFeed.subscribers === before + 1);
  }
  return streams;
}

async function progressUntilEnd(stream: Stream): Promise<{ status: string; removedSoFar: number }[]> {
  const seen = [];
  for (let event = await stream.next(); event && event.event !== 'complete'; event = await stream.next()) {
    expect(event.data.errors).toBeUndefined();
    seen.push(event.data.data.communityPurgeProgress);
  }
  return seen;
}

describe('communityPurgeProgress', () => {
  it('is pushed from changes to every instance: one shared read per change, not one per stream, to FINISHED', () =>
    withCluster(async () => {
      await sendAndLeave('700', 400);
      const streams = await openProgress(b, '700', 6);
      // No purge yet: nothing sent, and the six streams shared one read.
      expect(b.services.purges.feed.counters.reads).toBe(1);
      await requestPurge('700');
      const seen = await Promise.all(streams.map(progressUntilEnd));
      const { rows } = await cluster.db.query(`SELECT chunks FROM community_purge WHERE user_id = 700`);
      for (const events of seen) {
        expect(events.at(-1)).toMatchObject({ status: 'FINISHED', removedSoFar: 400 });
        for (let i = 1; i < events.length; i++) expect(events[i]!.removedSoFar).toBeGreaterThanOrEqual(events[i - 1]!.removedSoFar);
      }
      // At most a read per change (the request, each chunk, and one re-read after a change that arrived mid-read).
      expect(b.services.purges.feed.counters.reads).toBeLessThanOrEqual(1 + 2 * (rows[0].chunks + 1));
      await eventually(() => b.services.statusFeed.subscribers === 0 && b.services.purges.feed.followedUsers === 0);
    }));

  it('takes places from the same caps as status streams, counted in the same gauge, and refuses past the per-user cap', () =>
    withCluster(async () => {
      const progress = await openProgress(b, '710', 7);
      const status = await subscribe(b, WATCH, {}, await token('710'));
      expect((await status.next())?.data.data.communityLayerStatusChanged.status).toBe('ACTIVE');
      expect(await metric(b, 'community_subscriptions')).toBe(8);

      const refused = await subscribe(b, PROGRESS, {}, await token('710'));
      expect(refused.status).toBe(429);
      expect((await refused.next())?.data.errors[0].extensions).toMatchObject({ code: 'TOO_MANY_SUBSCRIPTIONS', limit: 'perUser' });
      expect(await metric(b, 'community_subscriptions_refused_total', { limit: 'perUser' })).toBe(1);

      for (const stream of [...progress, status]) stream.close();
      await eventually(async () => (await metric(b, 'community_subscriptions')) === 0);
    }));

  it('leaves no database work behind once its clients have gone', () =>
    withCluster(async () => {
      await sendAndLeave('720', 200);
      const streams = await openProgress(b, '720', 8);
      for (const stream of streams) stream.close();
      await eventually(() => b.services.statusFeed.subscribers === 0 && b.services.purges.feed.followedUsers === 0);
      const readsAfterDisconnect = b.services.purges.feed.counters.reads;

      // The purge moves in many changes, announced to b by its worker and by NOTIFY: b reads nothing for them.
      await requestPurge('720');
      await eventually(
        async () => (await cluster.db.query(`SELECT status FROM community_purge WHERE user_id = 720`)).rows[0]?.status === 'FINISHED',
        30_000,
      );
      const { rows } = await cluster.db.query(`SELECT chunks FROM community_purge WHERE user_id = 720`);
      expect(rows[0].chunks).toBeGreaterThan(2);
      // A later stream still works, and a change read for it is what made b read again.
      // Not through openProgress: on a finished purge the stream may end before its place is seen taken.
      const late = await subscribe(b, PROGRESS, {}, await token('720'));
      expect((await progressUntilEnd(late)).at(-1)).toMatchObject({ status: 'FINISHED', removedSoFar: 200 });
      expect(b.services.purges.feed.counters.reads - readsAfterDisconnect).toBe(1);
    }));

  it('ends with UNAUTHENTICATED when its token expires, and gives its place back', () =>
    withCluster(async () => {
      const stream = await subscribe(b, PROGRESS, {}, await token('730', undefined, '5s'));
      await eventually(() => b.services.statusFeed.subscribers === 1);
      const expired = await stream.next();
      expect(expired?.data.errors[0].extensions.code).toBe('UNAUTHENTICATED');
      expect(expired?.data.errors[0].message).toContain('expired');
      expect((await stream.next())?.event).toBe('complete');
      await eventually(() => b.services.statusFeed.subscribers === 0 && b.services.purges.feed.followedUsers === 0);
    }));
});
