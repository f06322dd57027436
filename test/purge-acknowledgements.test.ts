import { SettingsClient } from '@community-layer/settings-client';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { gql, token, useCluster, type Cluster } from './support/harness.js';

const REGISTER = `mutation ($subject: String!, $name: String!) { registerDownstreamProcessor(subject: $subject, name: $name) { id subject } }`;
const ACK = `mutation ($purgeId: UInt64!, $state: PurgeAcknowledgementState!, $reason: String) {
  acknowledgeCommunityPurge(purgeId: $purgeId, state: $state, reason: $reason) { state reason acknowledgedAt processor { subject } }
}`;
const RECEIPT = `query ($userId: UInt64) { communityPurges(userId: $userId, last: 1) { purgeId downstream {
  total done failed pending processors { state reason acknowledgedAt processor { subject } history { state reason } }
} } }`;

interface Downstream {
  total: number;
  done: number;
  failed: number;
  pending: number;
  processors: {
    state: string;
    reason: string | null;
    acknowledgedAt: string | null;
    processor: { subject: string };
    history: { state: string; reason: string | null }[];
  }[];
}

let cluster: Cluster;
let app: App;
useCluster([{}], (started) => ((cluster = started), (app = started.apps[0]!)));

const ackToken = (subject: string) => token(subject, 'community:purge-ack', '1h');

async function purgeOf(userId: string): Promise<string> {
  expect((await gql(app, `mutation { leaveCommunityLayer(userId: "${userId}") { status } }`)).errors).toBeUndefined();
  const purge = await gql<{ purgeCommunityContributions: { purgeId: string } }>(
    app,
    `mutation { purgeCommunityContributions(userId: "${userId}") { purgeId } }`,
  );
  expect(purge.errors).toBeUndefined();
  return purge.data!.purgeCommunityContributions.purgeId;
}

async function downstream(userId: string): Promise<Downstream> {
  const response = await gql<{ communityPurges: { downstream: Downstream }[] }>(app, RECEIPT, { userId });
  expect(response.errors).toBeUndefined();
  return response.data!.communityPurges[0]!.downstream;
}

async function ack(subject: string, purgeId: string, state: 'DONE' | 'FAILED', reason?: string) {
  return gql<{ acknowledgeCommunityPurge: { state: string; reason: string | null; acknowledgedAt: string } }>(
    app,
    ACK,
    { purgeId, state, reason },
    await ackToken(subject),
  );
}

async function acknowledgementRows(): Promise<string> {
  const { rows } =
    await cluster.db.query(`SELECT concat_ws('/', (SELECT count(*) FROM purge_acknowledgement), (SELECT count(*) FROM purge_acknowledgement_change),
    (SELECT string_agg(state || coalesce(reason, ''), ',' ORDER BY purge_id, processor_id) FROM purge_acknowledgement)) AS n`);
  return rows[0].n;
}

describe('downstream purge acknowledgements', () => {
  it('registered processors acknowledge a purge; the receipt shows each state; refusals write nothing', async () => {
    for (const [subject, name] of [
      ['warehouse-etl', 'Warehouse'],
      ['feature-store@clients', 'Feature store'],
    ]) {
      expect((await gql(app, REGISTER, { subject, name })).errors).toBeUndefined();
    }
    const again = await gql(app, REGISTER, { subject: 'warehouse-etl', name: 'Again' });
    expect(again.errors?.[0]?.extensions?.['code']).toBe('PROCESSOR_EXISTS');
    const numeric = await gql(app, REGISTER, { subject: '12345', name: 'A user id' });
    expect(numeric.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'subject' });

    const purgeId = await purgeOf('7100');
    // Registered after the purge was requested: not counted for it.
    expect((await gql(app, REGISTER, { subject: 'late-cache', name: 'Late cache' })).errors).toBeUndefined();
    expect(await downstream('7100')).toMatchObject({ total: 2, done: 0, failed: 0, pending: 2 });

    const before = await acknowledgementRows();
    const refusals: [Promise<{ errors?: { extensions?: Record<string, unknown> }[] }>, string][] = [
      [gql(app, ACK, { purgeId, state: 'DONE' }, await ackToken('7100')), 'FORBIDDEN'], // a user token, even with the scope
      [gql(app, ACK, { purgeId, state: 'DONE' }, await token('warehouse-etl', 'community:feed', '1h')), 'FORBIDDEN'], // without the scope
      [ack('stranger', purgeId, 'DONE'), 'UNKNOWN_PROCESSOR'],
      [ack('warehouse-etl', '999999', 'DONE'), 'PURGE_NOT_FOUND'],
      [ack('warehouse-etl', '18446744073709551615', 'DONE'), 'PURGE_NOT_FOUND'],
      [ack('warehouse-etl', purgeId, 'FAILED'), 'BAD_USER_INPUT'],
      [ack('warehouse-etl', purgeId, 'FAILED', '  '), 'BAD_USER_INPUT'],
      [ack('warehouse-etl', purgeId, 'DONE', 'all good'), 'BAD_USER_INPUT'],
    ];
    for (const [response, code] of refusals) {
      const { errors } = await response;
      expect(errors?.[0]?.extensions?.['code'], code).toBe(code);
    }
    expect(await acknowledgementRows()).toBe(before);

    expect((await ack('warehouse-etl', purgeId, 'DONE')).data?.acknowledgeCommunityPurge.state).toBe('DONE');
    const failed = await ack('feature-store@clients', purgeId, 'FAILED', 'feature store offline');
    expect(failed.data?.acknowledgeCommunityPurge).toMatchObject({ state: 'FAILED', reason: 'feature store offline' });
    const halfway = await downstream('7100');
    expect(halfway).toMatchObject({ total: 2, done: 1, failed: 1, pending: 0 });
    expect(halfway.processors.map((p) => [p.processor.subject, p.state, p.reason])).toEqual([
      ['warehouse-etl', 'DONE', null],
      ['feature-store@clients', 'FAILED', 'feature store offline'],
    ]);

    // A repeat changes nothing (not even its time); a new state wins, and the history keeps the FAILED.
    const repeat = await ack('warehouse-etl', purgeId, 'DONE');
    expect(repeat.data?.acknowledgeCommunityPurge.acknowledgedAt).toBe(halfway.processors[0]!.acknowledgedAt);
    expect((await ack('feature-store@clients', purgeId, 'DONE')).errors).toBeUndefined();
    const done = await downstream('7100');
    expect(done).toMatchObject({ total: 2, done: 2, failed: 0, pending: 0 });
    expect(done.processors.map((p) => p.history)).toEqual([
      [{ state: 'DONE', reason: null }],
      [
        { state: 'FAILED', reason: 'feature store offline' },
        { state: 'DONE', reason: null },
      ],
    ]);

    // What the settings page shows ("removed from N of M systems"): its own client, by hash, with the user's token.
    const page = new SettingsClient({ url: app.url, token: await token('7100') });
    expect((await page.latestPurge())?.downstream).toEqual({ total: 2, done: 2, failed: 0 });

    // The late processor may still acknowledge, and then counts; a retired one neither counts nor may.
    expect((await ack('late-cache', purgeId, 'DONE')).errors).toBeUndefined();
    expect(await downstream('7100')).toMatchObject({ total: 3, done: 3 });
    const processors = await gql<{ downstreamProcessors: { id: string; subject: string }[] }>(
      app,
      `{ downstreamProcessors { id subject } }`,
    );
    const late = processors.data!.downstreamProcessors.find((p) => p.subject === 'late-cache')!;
    expect((await gql(app, `mutation ($id: UInt64!) { retireDownstreamProcessor(id: $id) { retired } }`, { id: late.id })).data).toEqual({
      retireDownstreamProcessor: { retired: true },
    });
    expect(await downstream('7100')).toMatchObject({ total: 2, done: 2 });
    const retiredAck = await ack('late-cache', purgeId, 'FAILED', 'too late');
    expect(retiredAck.errors?.[0]?.extensions?.['code']).toBe('UNKNOWN_PROCESSOR');
  });

  it('acknowledgements at once, repeatedly: each processor ends at its last state, one history row per change', async () => {
    const purgeId = await purgeOf('7101');
    const rounds = 15;
    const plan = (subject: string, round: number): ['DONE' | 'FAILED', string | undefined] =>
      subject === 'warehouse-etl'
        ? round % 3 === 0
          ? ['FAILED', `round ${round}`]
          : ['DONE', undefined]
        : round % 2 === 0
          ? ['FAILED', 'busy']
          : ['DONE', undefined];
    const subjects = ['warehouse-etl', 'feature-store@clients'];
    for (let round = 0; round < rounds; round++) {
      // Both processors at once, each sending its acknowledgement twice at once (a retried request).
      const responses = await Promise.all(subjects.flatMap((subject) => [0, 1].map(() => ack(subject, purgeId, ...plan(subject, round)))));
      for (const response of responses) expect(response.errors).toBeUndefined();
    }
    const state = await downstream('7101');
    const last = (subject: string) => plan(subject, rounds - 1);
    expect(state.processors.map((p) => [p.processor.subject, p.state, p.reason])).toEqual(
      subjects.map((s) => [s, last(s)[0], last(s)[1] ?? null]),
    );
    for (const subject of subjects) {
      const expected: string[] = [];
      for (let round = 0; round < rounds; round++) {
        const change = plan(subject, round).join(':');
        if (expected.at(-1) !== change) expected.push(change);
      }
      const history = state.processors.find((p) => p.processor.subject === subject)!.history;
      expect(history.map((h) => [h.state, h.reason ?? undefined].join(':'))).toEqual(expected);
    }
    const { rows } = await cluster.db.query(`SELECT count(*)::int AS n FROM purge_acknowledgement WHERE purge_id = $1`, [purgeId]);
    expect(rows[0].n).toBe(2);
  });

  it('webhook endpoints list their kinds; an admin disables one with a reason', async () => {
    const registered = await gql<{ registerWebhookEndpoint: { endpoint: { id: string; eventKinds: string[] } } }>(
      app,
      `mutation { registerWebhookEndpoint(url: "https://warehouse.example/hook", eventKinds: [PURGE_FINISHED, LEFT]) { endpoint { id eventKinds } } }`,
    );
    expect(registered.data?.registerWebhookEndpoint.endpoint.eventKinds).toEqual(['PURGE_FINISHED', 'LEFT']);
    const id = registered.data!.registerWebhookEndpoint.endpoint.id;
    const disabled = await gql(
      app,
      `mutation ($id: UInt64!) { disableWebhookEndpoint(id: $id, reason: "maintenance") { disabledReason eventKinds } }`,
      { id },
    );
    expect(disabled.data).toEqual({ disableWebhookEndpoint: { disabledReason: 'maintenance', eventKinds: ['PURGE_FINISHED', 'LEFT'] } });
  });
});
