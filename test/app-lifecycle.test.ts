import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appParts, createApp } from '../src/app.js';
import { lifecycle, type Part } from '../src/util/lifecycle.js';
import { eventually, freshDatabase, TEST_SECRET } from './support/harness.js';
import { localAppConfig } from '../tooling/start-app.js';

/** createApp's parts in start order: read backwards, the order of a stop. */
const PARTS = [
  'request scope',
  'tracing',
  'database',
  'metrics export',
  'start-up checks',
  'listener',
  'membership backstop',
  'event-loop sampler',
  'auth keys',
  'purge database',
  'fair share',
  'webhooks',
  'purge worker',
  'signals',
  'http',
  'streams',
  'readiness',
];

let databaseUrl: string;
let db: pg.Client;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
});

afterAll(() => db?.end());

/** The instance's backends: every client session on its database but this test's own. */
async function backends(): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT coalesce(nullif(application_name, ''), 'pool') AS name FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
  );
  return rows.map((row) => row.name).sort();
}

/** What keeps the process alive, by kind (sockets, servers, timers, …), sorted. */
const resources = () => process.getActiveResourcesInfo().sort();

/** What `now` holds beyond `before` (what was there before may have ended meanwhile). */
function beyond(before: string[], now: string[]): string[] {
  const left = [...before];
  return now.filter((kind) => {
    const at = left.indexOf(kind);
    if (at >= 0) left.splice(at, 1);
    return at < 0;
  });
}

/** An instance whose part `failing` refuses to start (none: every part starts), and what its parts did. */
function instance(failing: string | null) {
  const { parts } = appParts(localAppConfig(databaseUrl, { secret: TEST_SECRET, environment: { WEBHOOK_DELIVERY: 'on' } }));
  const started: string[] = [];
  const stopped: string[] = [];
  const watched = parts.map(
    (part): Part => ({
      name: part.name,
      async start() {
        if (part.name === failing) throw new Error(`${part.name} refused to start`);
        await part.start?.();
        started.push(part.name);
      },
      async stop() {
        stopped.push(part.name);
        await part.stop?.();
      },
    }),
  );
  const failedStops: string[] = [];
  const app = lifecycle(watched, { onStopFailed: (name, error) => failedStops.push(`${name}: ${String(error)}`) });
  return { names: parts.map((part) => part.name), started, stopped, failedStops, app };
}

/** Nothing the instance opened is left: no backend of its own, and the process holds no more than before. */
async function nothingLeft(before: string[]): Promise<void> {
  // A closed connection's backend and socket go a moment after the close resolves.
  await eventually(async () => (await backends()).length === 0 && beyond(before, resources()).length === 0, 30_000).catch(async () => {
    expect({ backends: await backends(), resources: beyond(before, resources()) }).toEqual({ backends: [], resources: [] });
  });
}

describe('the app lifecycle', () => {
  it('is made of these parts, and without the membership sync of the same but the listener and the backstop', () => {
    expect(instance(null).names).toEqual(PARTS);
    const { parts } = appParts(localAppConfig(databaseUrl, { secret: TEST_SECRET }), { membershipSync: false });
    expect(parts.map((part) => part.name)).toEqual(PARTS.filter((name) => name !== 'listener' && name !== 'membership backstop'));
  });

  it('says what it is doing and what each pool holds (what a stop that hangs reports)', async () => {
    const app = createApp(localAppConfig(databaseUrl, { secret: TEST_SECRET }));
    expect(app.progress()).toMatch(
      /^idle; request pool 0 checked out of 0, 0 waiting; purge pool .*; webhook queue pool .*; fair share pool /,
    );
    await app.start();
    await app.stop();
    expect(app.progress()).toMatch(/^idle; request pool 0 checked out of 0, 0 waiting, ended;/);
  });

  it('every part started and stopped leaves nothing running', async () => {
    const before = resources();
    const { app, started, stopped, failedStops } = instance(null);
    await app.start();
    expect(await backends()).not.toEqual([]);
    await app.stop();
    expect(started).toEqual(PARTS);
    expect(stopped).toEqual([...PARTS].reverse());
    expect(failedStops).toEqual([]);
    await nothingLeft(before);
  });

  it.each(PARTS.map((name, index) => [index + 1, name]))(
    'part %i (%s) refusing to start stops exactly the parts before it, and leaves nothing running',
    async (n, name) => {
      const before = resources();
      const { app, started, stopped, failedStops } = instance(name as string);
      await expect(app.start()).rejects.toThrow(`${name} refused to start`);
      const earlier = PARTS.slice(0, (n as number) - 1);
      expect(started).toEqual(earlier);
      expect(stopped).toEqual([...earlier].reverse());
      expect(failedStops).toEqual([]);
      await nothingLeft(before);
    },
  );
});
