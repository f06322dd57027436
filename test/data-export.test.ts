import { createHash } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually } from '../tooling/eventually.js';
import { download, expectedRecords, exportUrl } from './support/export-download.js';
import { gql, token, useCluster, type Cluster } from './support/harness.js';
import { acknowledged } from './support/backup-fixture.js';
import { finished, leave, purge, send } from './support/purge-requests.js';

let cluster: Cluster;
let app: App;
// A user's budget large enough for a few thousand records at once (each record costs a point).
useCluster([{}], (started) => ((cluster = started), (app = started.apps[0]!)), 'direct', { FAIR_SHARE_USER_CAPACITY: '12000' });

const USER = '8200';
const rejoin = async (userId: string) =>
  expect(
    (
      await gql(
        app,
        `mutation { rejoinCommunityLayer(userId: "${userId}", reason: CONSENT_PLATFORM, reasonText: "ticket 42", policyVersion: "2026-11") { status } }`,
      )
    ).errors,
  ).toBeUndefined();

describe("a user's data to take away", () => {
  it('exports everything held about the user, row for row, sealed with a JWS the published key verifies', async () => {
    await send(app, USER, 1200);
    await leave(app, USER);
    await rejoin(USER);
    await send(app, USER, 300, ['north'], 1200);
    await leave(app, USER);
    await send(app, USER, 20, [], 1500); // while LEFT: kept as the user's own record, never forwarded
    const purgeId = (await purge(app, USER)).data!.purgeCommunityContributions.purgeId;
    await finished(app, USER);
    expect(
      (await gql(app, `mutation { registerDownstreamProcessor(subject: "warehouse", name: "Warehouse") { id } }`)).errors,
    ).toBeUndefined();
    await acknowledged(app, 'warehouse', purgeId);
    await rejoin(USER);
    await send(app, USER, 1100, ['north', 'south'], 1520); // still in the aggregates: more than a page of each
    // Every field filled, with text JSON must escape and a time finer than a millisecond (exported truncated, as a Date holds it).
    const detailed = {
      userId: USER,
      itemId: 'café "quoted" \\ back',
      kind: 'SAVE',
      weight: 2.5,
      occurredAt: '2026-11-30T10:11:12.345678Z',
      eventId: 'évent-1',
      context: { cohortIds: ['north'], surface: 'feed "top"\nnext' },
    };
    expect(
      (await gql(app, `mutation S($inputs: [SignalInput!]!) { signals(inputs: $inputs) { forwarded } }`, { inputs: [detailed] })).errors,
    ).toBeUndefined();

    const own = await download(app, await token(USER));
    expect(own.status).toBe(200);
    expect(own.contentType).toMatch(/^application\/x-ndjson/);
    const expected = await expectedRecords(cluster.db, USER);
    expect(own.records).toMatchObject(expected);
    expect(own.records).toHaveLength(expected.length);
    // Signals and contributions, built by PostgreSQL, are byte for byte what JSON.stringify gives.
    const lines = own.body.split('\n');
    const differing = expected.filter(
      (record, i) => ['signal', 'contribution'].includes(record.type as string) && lines[i] !== JSON.stringify(record),
    );
    expect(differing).toEqual([]);
    expect(own.records).toContainEqual(
      expect.objectContaining({ type: 'signal', occurredAt: '2026-11-30T10:11:12.345Z', eventId: 'évent-1' }),
    );
    const counts = (type: string) => expected.filter((record) => record.type === type).length;
    expect([counts('leave'), counts('rejoin'), counts('signal'), counts('purge'), counts('acknowledgement')]).toEqual([2, 2, 2621, 1, 1]);
    expect([counts('contribution'), counts('receipt')]).toEqual([3 * 1100 + 2, 3]);

    // The receipt in the export is the purge's signed receipt; the seal covers every byte before it.
    const keys = createLocalJWKSet(await (await fetch(new URL('/.well-known/community-receipts.json', app.url))).json());
    const receipt = own.records.find((record) => record.receipt === 'purge')!;
    const { payload: receiptClaims } = await jwtVerify(receipt['token'] as string, keys, { typ: 'community-receipt+jwt' });
    expect(receiptClaims).toMatchObject({ receipt: 'purge', purgeId, userId: USER, status: 'FINISHED' });
    // Each leave's receipt: the claims the API signs for it (signedLeaveReceipt), reason included where recorded.
    const leaves = own.records.filter((record) => record.type === 'leave');
    const leaveReceipts = own.records.filter((record) => record.receipt === 'leave');
    expect(leaveReceipts.map((record) => record['leftAtNs'])).toEqual(leaves.map((record) => record['leftAtNs']));
    for (const [i, leaveReceipt] of leaveReceipts.entries()) {
      const { payload: claims } = await jwtVerify(leaveReceipt['token'] as string, keys, { typ: 'community-receipt+jwt', subject: USER });
      const consent = leaves[i]!['consent'] as Record<string, unknown> | null;
      expect(claims).toMatchObject({ receipt: 'leave', userId: USER, leftAtNs: leaves[i]!['leftAtNs'], ...(consent ?? {}) });
      expect(claims['jti']).toBe(`leave:${USER}:${leaves[i]!['leftAtNs']}`);
    }
    const { payload } = await jwtVerify(own.seal.jws, keys, { typ: 'community-export+jwt', issuer: 'community-layer', subject: USER });
    expect(payload['sha256']).toBe(own.sha256);
    expect(payload['userId']).toBe(USER);
    expect(payload['counts']).toEqual(
      Object.fromEntries(
        ['status', 'leave', 'rejoin', 'signal', 'contribution', 'purge', 'receipt', 'acknowledgement'].map((type) => [type, counts(type)]),
      ),
    );
    const { rows } = await cluster.db.query(`SELECT max(at_ns)::text AS newest FROM signal WHERE user_id = $1`, [USER]);
    expect(BigInt(payload['includedUpToNs'] as string)).toBeGreaterThan(BigInt(rows[0].newest));
    // A changed byte no longer matches the signed hash.
    const tampered = own.body.slice(0, own.body.length - own.body.split('\n').at(-2)!.length - 1).replace('"kind":"LIKE"', '"kind":"SAVE"');
    expect(createHash('sha256').update(tampered).digest('hex')).not.toBe(payload['sha256']);

    // An admin exports the same user; the records are the same (the seal's instant differs).
    const admin = await download(app, await token('1', 'community:admin', '1h'), USER);
    expect(admin.status).toBe(200);
    expect(admin.records).toEqual(
      own.records.map((record) => (record.type === 'receipt' ? { ...record, token: expect.any(String) } : record)),
    );
  });

  it('refuses others, without a token, a bad userId, and a caller whose budget is spent', async () => {
    const refused = async (bearer: string | null, userId: string | undefined, status: number, code: string) => {
      const response = await fetch(exportUrl(app, userId), { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
      expect(response.status, code).toBe(status);
      const body = await response.json();
      expect(body.errors[0].extensions.code).toBe(code);
      return response;
    };
    await refused(null, undefined, 401, 'UNAUTHENTICATED');
    await refused(await token('8201'), USER, 403, 'FORBIDDEN');
    await refused(await token('8201', 'signals:write community:feed'), USER, 403, 'FORBIDDEN');
    await refused(await token('feed-reader', 'community:feed'), undefined, 400, 'BAD_USER_INPUT');
    await refused(await token('1', 'community:admin', '1h'), 'not-a-number', 400, 'BAD_USER_INPUT');
    // The user themselves may name their own id.
    expect((await download(app, await token('8201'), '8201')).status).toBe(200);

    // Each export costs at least a page (1,000 points) up front: a 12,000-point budget runs out.
    const user = await token('8202');
    let admitted = 0;
    for (; admitted < 20; admitted++) {
      const attempt = await download(app, user);
      if (attempt.status !== 200) break;
      expect(attempt.records).toHaveLength(1);
    }
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(12);
    const spent = await refused(user, undefined, 429, 'RATE_LIMITED');
    expect(Number(spent.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('ends the COPY and gives its connection back when the client goes away half way', async () => {
    const HEAVY = '8300';
    // Far more than the socket buffers hold (~25 MB of lines): the COPY is still running when the client goes.
    await cluster.db.query(
      `INSERT INTO signal (id, user_id, item_id, kind, weight_micros, cohort_ids, at_ns, forwarded)
       SELECT nextval('signal_id_seq'), $1, 'item-' || g, 'LIKE', 1000000, '{}', now_ns() - 3600000000000 + g, false
         FROM generate_series(1, 100000) g`,
      [HEAVY],
    );
    const copies = async () =>
      (
        await cluster.db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'COPY (SELECT row_to_json%'`,
        )
      ).rows[0].n;
    const admin = await token('1', 'community:admin', '1h');
    const stop = new AbortController();
    const response = await fetch(exportUrl(app, HEAVY), { headers: { authorization: `Bearer ${admin}` }, signal: stop.signal });
    const reader = response.body!.getReader();
    for (let received = 0; received < 100_000; ) received += (await reader.read()).value!.length;
    expect(await copies()).toBe(1);
    stop.abort();
    await eventually(async () => (await copies()) === 0);
    await eventually(() => /request pool 0 checked out/.test(app.progress()));
    // The pool lends a working session to the next export.
    expect((await download(app, admin, '8301')).status).toBe(200);
  });
});
