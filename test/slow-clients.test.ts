import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, freshDatabase, metric, sqlClient, startApp, token } from './support/harness.js';
import { trickle, type Trickle } from './support/trickle.js';

const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId } }`;

/** A legitimate batch of `size` signals, sent whole at once. */
async function batch(app: App, bearer: string, tag: string, size = 100) {
  const inputs = Array.from({ length: size }, (_, i) => ({ userId: '77', itemId: `${tag}-${i}`, kind: 'VIEW' }));
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query: SIGNALS, variables: { inputs } }),
  });
  const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
  return { status: response.status, code: body.errors?.[0]?.extensions?.code ?? null };
}

/**
 * One app per describe: one bulk place, a line of 32, two places per credential and three per
 * address; `bodyTimeoutMs` is the body deadline. `open` holds the trickles a test leaves behind.
 */
function useDoor(bodyTimeoutMs: string) {
  const door = { app: undefined as unknown as App, databaseUrl: '', writer: '', open: [] as Trickle[] };
  beforeAll(async () => {
    door.databaseUrl = await freshDatabase();
    door.app = await startApp(door.databaseUrl, {
      BULK_REQUESTS_MAX: '1',
      BULK_REQUESTS_WAITING_MAX: '32',
      BULK_MAX_EVENT_LOOP_UTILIZATION: '1',
      BULK_BODY_TIMEOUT_MS: bodyTimeoutMs,
      BULK_REQUESTS_PER_CREDENTIAL_MAX: '2',
      BULK_REQUESTS_PER_ADDRESS_MAX: '3',
      // The door is under test, not the budgets: 10 batches from one user may outrun a user's budget.
      FAIR_SHARE: 'false',
    });
    door.writer = await token('1', 'signals:write');
  });
  afterEach(() => {
    for (const socket of door.open.splice(0)) socket.close();
  });
  afterAll(() => door.app?.stop());
  return door;
}

describe('the bulk door against slow and hostile clients', () => {
  const door = useDoor('3000');

  it('refuses unauthenticated bulk bodies from their headers, so 33 trickling sockets take no place and batches pass', async () => {
    const attackers = Array.from({ length: 33 }, () => trickle(door.app.url));
    door.open.push(...attackers);
    const answers = await Promise.all(attackers.map((attacker) => attacker.response));
    for (const answer of answers) {
      expect(answer?.status).toBe(401);
      expect(JSON.parse(answer!.body).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
    expect(await metric(door.app, 'community_bulk_requests_waiting')).toBe(0);
    // Two at a time: the writer's own cap (BULK_REQUESTS_PER_CREDENTIAL_MAX) is 2 here.
    for (let i = 0; i < 10; i += 2) {
      expect(await Promise.all([batch(door.app, door.writer, `legit${i}`), batch(door.app, door.writer, `legit${i + 1}`)])).toEqual([
        { status: 200, code: null },
        { status: 200, code: null },
      ]);
    }
  });

  it('a trickling body holds no place to decode: batches enter while it trickles, and it is cut after BULK_BODY_TIMEOUT_MS with 408', async () => {
    const slow = trickle(door.app.url, { bearer: await token('2', 'signals:write') });
    door.open.push(slow);
    await eventually(async () => (await metric(door.app, 'community_bulk_requests_waiting')) === 1);
    // One place to decode at the door, and the trickle does not have it: the batch is answered
    // first (holding the place, the trickle would let it in only once cut).
    const beside = batch(door.app, door.writer, 'beside-slow');
    expect(await Promise.race([beside.then(() => 'batch'), slow.response.then(() => 'cut')])).toBe('batch');
    expect(await beside).toEqual({ status: 200, code: null });
    const cut = await slow.response;
    expect(cut?.status).toBe(408);
    expect(JSON.parse(cut!.body).errors[0].extensions.code).toBe('REQUEST_TIMEOUT');
    await eventually(async () => (await metric(door.app, 'community_bulk_requests_waiting')) === 0);
  });
});

describe('the bulk door per client', () => {
  // No body deadline here: the places stay held until the test lets them go.
  const door = useDoor('600000');

  it('lets one credential, and one address, hold only so many places: the rest are refused at once, other clients still enter', async () => {
    const places = async () =>
      (await metric(door.app, 'community_bulk_requests_in_progress')) + (await metric(door.app, 'community_bulk_requests_waiting'));
    const greedy = await token('3', 'signals:write');
    const held = [trickle(door.app.url, { bearer: greedy }), trickle(door.app.url, { bearer: greedy })];
    door.open.push(...held);
    await eventually(async () => (await places()) === 2);
    const third = trickle(door.app.url, { bearer: greedy });
    door.open.push(third);
    const refused = await third.response;
    expect(refused?.status).toBe(503);
    expect(JSON.parse(refused!.body).errors[0].extensions.code).toBe('OVERLOADED');
    // Another address (127.0.0.2 is loopback too) with fresh credentials: at most three places.
    const other = await Promise.all(['4', '5', '6', '7'].map((user) => token(user, 'signals:write')));
    const fromOther = other.map((bearer) => () => trickle(door.app.url, { bearer, localAddress: '127.0.0.2' }));
    // The fourth only once the first three hold their places: sent together, any of them may arrive last.
    door.open.push(...fromOther.slice(0, 3).map((open) => open()));
    await eventually(async () => (await places()) === 5);
    const fourth = fromOther[3]!();
    door.open.push(fourth);
    expect((await fourth.response)?.status).toBe(503);
    // A legitimate batch still gets its turn, the tricklers' bodies still arriving.
    expect(await batch(door.app, door.writer, 'after-greedy')).toEqual({ status: 200, code: null });
    expect(await metric(door.app, 'community_bulk_requests_waiting')).toBe(5);
    const db = await sqlClient(door.databaseUrl);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM signal WHERE item_id LIKE 'after-greedy-%'`);
    expect(rows[0].n).toBe(100);
    await db.end();
  });
});
