import { createClient as createWsClient } from 'graphql-ws';
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { eventually, gql, startCluster, token, type Cluster, type GraphQLResponse } from './support/harness.js';
import { subscribe } from './support/sse.js';
import {
  CHANGES,
  type Change,
  type ChangePage,
  churn,
  describeEvent,
  expectedEvents,
  mutate,
  PAGE,
  readUntil,
} from './support/change-feed-reading.js';

let cluster: Cluster;
let feedToken: string;
let receiptKey: string;

beforeAll(async () => {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  receiptKey = JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'test-receipts-1' });
  cluster = await startCluster([]);
  cluster.apps.push(await cluster.startInstance({ RECEIPT_SIGNING_KEY: receiptKey, FEED_POLL_MS: '200' }));
  cluster.apps.push(await cluster.startInstance({ RECEIPT_SIGNING_KEY: receiptKey, FEED_POLL_MS: '200' }));
  feedToken = await token('warehouse', 'community:feed', '1h');
});
afterAll(() => cluster?.stop());

describe('the change feed', () => {
  it('resumed from a cursor after a listener kill and after an instance restart, misses nothing and keeps commit order', async () => {
    const [reader, writer] = cluster.apps as [App, App];
    const users = Array.from({ length: 6 }, (_, i) => String(3000 + i));
    const received: Change[] = [];
    // History first: changes made before anyone subscribed.
    await churn(writer, users, 2);
    const live = readUntil(reader, feedToken, null, received, () => received.length >= 40);
    // The reader's LISTEN session dies mid-stream; changes keep coming from the other instance.
    await eventually(() => received.length > 0);
    await cluster.db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [
      `community-layer listener ${reader.instanceId}`,
    ]);
    await churn(writer, users, 2);
    await live;
    // The reader instance is restarted; the client resumes on the new instance from its last cursor.
    await reader.stop();
    cluster.apps.shift();
    await churn(writer, users, 1);
    const restarted = await cluster.startInstance({ RECEIPT_SIGNING_KEY: receiptKey, FEED_POLL_MS: '200' });
    cluster.apps.push(restarted);
    const expected = await expectedEvents(cluster.db);
    const resumeAt = received.at(-1)!.cursor;
    // A resume may repeat the last change; it is recognisable by id.
    await readUntil(restarted, feedToken, resumeAt, received, () => new Set(received.map((c) => c.id)).size >= expected.length);

    const unique = [...new Map(received.map((change) => [change.id, change])).values()];
    expect(unique.map(describeEvent).sort()).toEqual(expected);
    const positions = unique.map((change) => BigInt(change.id));
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    // Per user, the changes alternate LEFT … REJOINED as the history did.
    for (const userId of users) {
      const kinds = unique.filter((c) => c.userId === userId && (c.kind === 'LEFT' || c.kind === 'REJOINED')).map((c) => c.kind);
      expect(kinds).toEqual(Array.from({ length: kinds.length }, (_, i) => (i % 2 === 0 ? 'LEFT' : 'REJOINED')));
    }

    // The paged query serves the same changes in the same order.
    const paged: Change[] = [];
    let after: string | null = null;
    for (;;) {
      const response: GraphQLResponse<{ communityMembershipChangePage: ChangePage }> = await gql(
        restarted,
        PAGE,
        { after, first: 7 },
        feedToken,
      );
      expect(response.errors).toBeUndefined();
      const page: ChangePage = response.data!.communityMembershipChangePage;
      paged.push(...page.changes);
      if (!page.hasMore) break;
      after = page.endCursor;
    }
    expect(paged.map((c) => c.id)).toEqual(unique.map((c) => c.id));
  });

  it('streams over graphql-ws too, and is refused without community:feed or with a bad cursor', async () => {
    const app = cluster.apps.at(-1)!;
    const client = createWsClient({
      url: app.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${feedToken}` },
      retryAttempts: 0,
    });
    const stream = client.iterate<{ communityMembershipChanges: Change }>({ query: CHANGES, variables: { after: null } });
    const first = await stream.next();
    expect(first.value.data?.communityMembershipChanges.kind).toBe('LEFT');
    await stream.return?.();
    await client.dispose();

    const admin = await gql(app, PAGE, {});
    expect(admin.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    // A user's token, even with the scope, reads nothing: the feed carries every user's changes.
    const userToken = await token('123', 'community:feed', '1h');
    const paged = await gql(app, PAGE, {}, userToken);
    expect(paged.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    expect(paged.data ?? null).toBeNull();
    const streamed = await subscribe(app, CHANGES, { after: null }, userToken);
    const refusal = await streamed.next();
    expect(refusal?.data?.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    expect(refusal?.data?.data ?? null).toBeNull();
    streamed.close();
    const bad = await gql(app, PAGE, { after: 'abc' }, feedToken);
    expect(bad.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  });
});

describe('signed receipts', () => {
  it('verify with jose from the JWKS alone, on either instance', async () => {
    const app = cluster.apps.at(-1)!;
    await mutate(app, `mutation { leaveCommunityLayer(userId: "3900") { status } }`);
    const leave = await gql<{ communityLayerStatus: { leftAtNs: string; signedLeaveReceipt: string } }>(
      app,
      `{ communityLayerStatus(userId: "3900") { leftAtNs signedLeaveReceipt } }`,
    );
    const purge = await gql<{ purgeCommunityContributions: { purgeId: string; signedReceipt: string } }>(
      app,
      `mutation { purgeCommunityContributions(userId: "3900") { purgeId signedReceipt } }`,
    );
    const keys = createRemoteJWKSet(new URL('/.well-known/community-receipts.json', cluster.apps[0]!.url));
    const options = { issuer: 'community-layer', typ: 'community-receipt+jwt' };
    const { payload: leavePayload, protectedHeader } = await jwtVerify(leave.data!.communityLayerStatus.signedLeaveReceipt, keys, options);
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'test-receipts-1' });
    expect(leavePayload).toMatchObject({
      sub: '3900',
      jti: `leave:3900:${leave.data!.communityLayerStatus.leftAtNs}`,
      receipt: 'leave',
      leftAtNs: leave.data!.communityLayerStatus.leftAtNs,
    });
    const { purgeId, signedReceipt } = purge.data!.purgeCommunityContributions;
    const { payload: purgePayload } = await jwtVerify(signedReceipt, keys, options);
    expect(purgePayload).toMatchObject({
      sub: '3900',
      jti: `purge:${purgeId}`,
      receipt: 'purge',
      boundaryNs: leave.data!.communityLayerStatus.leftAtNs,
    });
    // A receipt altered by one character of its signature no longer verifies: the first, whose six bits
    // all count (the last character's low bits are padding, so changing it may decode to the same bytes).
    const [header, payload, signature] = signedReceipt.split('.') as [string, string, string];
    const tampered = `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    await expect(jwtVerify(tampered, keys, options)).rejects.toThrow();
  });
});
