import { fork, type ChildProcess } from 'node:child_process';
import { createSchema, createYoga } from 'graphql-yoga';
import type { App } from '../../src/app.js';
import { serveOnLoopback, type BareServer } from '../bare-yoga.js';
import type { Case } from '../case.js';
import { num, ms } from '../format.js';
import { exposeGc, settle, type Memory } from '../memory.js';
import type { SseClientsOptions, SseClientsReport } from '../sse-clients.js';

const LABEL = '8. memory per idle subscription';
const BARE_WATCH = 'subscription ($u: String) { communityLayerStatusChanged(userId: $u) }';
const WATCH =
  'subscription ($u: UInt64) { communityLayerStatusChanged(userId: $u) { userId status leftAt leaveCount history { leftAtNs rejoinedAtNs gatedSignals } } }';

/**
 * `idleStreams` subscriptions (one per user, as settings pages would hold them) opened against one
 * instance from a child process, then left idle. The server's heap (after full collections) and
 * RSS are measured before, while they are open, and after they closed; per stream is the delta
 * divided by the count. The ceiling is the same against a bare Yoga server whose subscription
 * yields one value and waits: what an idle SSE stream costs in Yoga alone. The details add what
 * one backstop resync costs with all of them watching.
 */
export const idleSubscriptions: Case = {
  labels: [LABEL],
  async run(cluster, sizes) {
    const gc = exposeGc();
    const userIds = Array.from({ length: sizes.idleStreams }, (_, i) => String(1_000_000 + i));

    const bare = await bareYogaServer();
    const ceiling = await measure(gc, { url: bare.url, token: cluster.token, query: BARE_WATCH }, userIds, async () => undefined);
    await bare.close();

    const app = await cluster.startApp(await cluster.freshDatabase());
    const feed = app.services.statusFeed;
    let resync = { reads: 0, ms: 0 };
    const measured = await measure(gc, { url: app.url, token: cluster.token, query: WATCH }, userIds, async (open) => {
      if (open) {
        await until(() => feed.subscribers === userIds.length && !feed.busy);
        resync = await timedResync(app);
      } else await until(() => feed.subscribers === 0);
    });

    const per = (memory: Measured, key: 'heapUsed' | 'rss') => (memory.open[key] - memory.before[key]) / userIds.length;
    const heapPerStream = per(measured, 'heapUsed');
    const ceilingHeap = per(ceiling, 'heapUsed');
    return [
      {
        case: LABEL,
        figure: `${kib(heapPerStream)} heap, ${kib(per(measured, 'rss'))} RSS per stream (${num(userIds.length)} streams)`,
        ceiling: `bare Yoga SSE ${kib(ceilingHeap)} heap, ${kib(per(ceiling, 'rss'))} RSS`,
        ratio: heapPerStream / ceilingHeap,
        target: '—',
        met: null,
        details: {
          streams: userIds.length,
          measured: { ...measured, heapBytesPerStream: heapPerStream, rssBytesPerStream: per(measured, 'rss') },
          bareYoga: { ...ceiling, heapBytesPerStream: ceilingHeap, rssBytesPerStream: per(ceiling, 'rss') },
          resyncWithAllWatched: { ...resync, summary: `${resync.reads} read(s) in ${ms(resync.ms)}` },
        },
      },
    ];
  },
};

type Measured = { before: Memory; open: Memory; afterClose: Memory; releasedWithinMs: number | null };

const RELEASE_WAIT_MS = 15_000;
/** Heap within this of its level before the streams counts as released. */
const RELEASE_SLACK_BYTES = 2 * 2 ** 20;

/**
 * Server memory before, with every stream open and after they closed. `settled(open)` waits for
 * the server to see them all open (or all gone); one stream first warms code paths and pools.
 * Closed sockets are torn down over the next seconds, so the heap is sampled until it is back
 * near its level before (null: it was not within RELEASE_WAIT_MS, which would be a leak).
 */
async function measure(
  gc: () => void,
  target: Omit<SseClientsOptions, 'userIds'>,
  userIds: string[],
  settled: (open: boolean) => Promise<void>,
): Promise<Measured> {
  const warm = await openStreams({ ...target, userIds: ['1'] });
  await warm.close();
  await settled(false);
  const before = settle(gc);
  const clients = await openStreams({ ...target, userIds });
  if (clients.report.failed > 0) throw new Error(`${clients.report.failed} streams failed: ${clients.report.firstFailure}`);
  await settled(true);
  const open = settle(gc);
  await clients.close();
  await settled(false);
  const closed = performance.now();
  let afterClose = settle(gc);
  while (afterClose.heapUsed > before.heapUsed + RELEASE_SLACK_BYTES && performance.now() - closed < RELEASE_WAIT_MS) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    afterClose = settle(gc);
  }
  const released = afterClose.heapUsed <= before.heapUsed + RELEASE_SLACK_BYTES;
  return { before, open, afterClose, releasedWithinMs: released ? performance.now() - closed : null };
}

async function bareYogaServer(): Promise<BareServer> {
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { ok: Boolean } type Subscription { communityLayerStatusChanged(userId: String): String }',
      resolvers: {
        Subscription: {
          communityLayerStatusChanged: {
            async *subscribe() {
              yield { communityLayerStatusChanged: 'ACTIVE' };
              await new Promise(() => undefined);
            },
          },
        },
      },
    }),
    logging: false,
  });
  return serveOnLoopback(yoga);
}

/** One backstop resync with every stream open: how many subscriber reads it cost, and how long. */
async function timedResync(app: App): Promise<{ reads: number; ms: number }> {
  const feed = app.services.statusFeed;
  const readsBefore = feed.counters.reads;
  const started = performance.now();
  await app.services.membershipCache.resync();
  await until(() => feed.counters.reads > readsBefore && !feed.busy);
  return { reads: feed.counters.reads - readsBefore, ms: performance.now() - started };
}

async function openStreams(options: SseClientsOptions) {
  const child = fork(new URL('../sse-clients.ts', import.meta.url), [], { serialization: 'advanced' });
  const message = <T>() =>
    new Promise<T>((resolve, reject) => {
      child.once('message', (value) => resolve(value as T));
      child.once('exit', (code) => reject(new Error(`SSE clients exited with ${code}`)));
    });
  child.send(options);
  const report = await message<SseClientsReport>();
  return {
    report,
    async close() {
      child.send('close');
      await message<unknown>();
      await exited(child);
    },
  };
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

async function until(check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function kib(bytes: number): string {
  return `${num(bytes / 1024, 1)} KiB`;
}
