import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import { eventually, gql, token } from './harness.js';

/** What the backup test reads back from a database, before the dump and after the restore. */
export const STATUS = `query ($userId: UInt64) { communityLayerStatus(userId: $userId) { userId status leftAtNs history { leftAtNs rejoinedAtNs } } }`;
export const RECEIPT = `query ($userId: UInt64) { communityPurges(userId: $userId) {
  purgeId status boundaryNs removedSoFar targets { target entries weight }
  downstream { total done processors { state processor { subject } } }
} }`;
export const VERIFY = `query { verifyCommunityAggregates { consistent mismatches { target itemId } } }`;
export const DELIVERIES = `query ($id: UInt64!) { webhookDeliveries(endpointId: $id) { id messageId status } }`;

/** Webhook settings of every instance: the receiver on loopback, retries every few hundred ms. */
export const WEBHOOKS = {
  WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.1',
  WEBHOOK_BACKOFF_MIN_MS: '50',
  WEBHOOK_BACKOFF_MAX_MS: '300',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_RECOVERY_MS: '500',
  WEBHOOK_DISABLE_AFTER_FAILURES: '1000000',
};

/** A receiver that resets every connection until `up` (deliveries wait in the queue), then answers 204 and keeps each webhook-id. */
export async function downReceiver() {
  const ids = new Set<string>();
  const state = { up: false };
  const server = http.createServer((req, res) => {
    ids.add(String(req.headers['webhook-id']));
    req.resume().on('end', () => res.writeHead(204).end());
  });
  server.on('connection', (socket) => state.up || socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    ids,
    state,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function ok<T = Record<string, any>>(app: App, query: string, variables?: Record<string, unknown>, bearer?: string) {
  const response = await gql<T>(app, query, variables, bearer);
  expect(response.errors).toBeUndefined();
  return response.data!;
}

/** Signals of `userId` on items backup-0…backup-2, in two cohorts. */
export async function send(app: App, userId: string, count: number): Promise<void> {
  const inputs = Array.from({ length: count }, (_, i) => ({
    userId,
    itemId: `backup-${i % 3}`,
    kind: 'LIKE',
    weight: (i % 4) + 1,
    context: { cohortIds: ['north', 'south'] },
  }));
  await ok(app, `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { forwarded } }`, { inputs });
}

export const leave = (app: App, userId: string) => ok(app, `mutation { leaveCommunityLayer(userId: "${userId}") { status } }`);
export const rejoin = (app: App, userId: string) => ok(app, `mutation { rejoinCommunityLayer(userId: "${userId}") { status } }`);

export async function purge(app: App, userId: string): Promise<string> {
  const data = await ok<{ purgeCommunityContributions: { purgeId: string } }>(
    app,
    `mutation { purgeCommunityContributions(userId: "${userId}") { purgeId } }`,
  );
  return data.purgeCommunityContributions.purgeId;
}

export async function receipt(app: App, userId: string) {
  const light = `query ($userId: UInt64) { communityPurges(userId: $userId) { status removedSoFar } }`;
  return (await ok<{ communityPurges: { status: string; removedSoFar: number }[] }>(app, light, { userId })).communityPurges;
}

export async function finished(app: App, userId: string): Promise<void> {
  await eventually(async () => (await receipt(app, userId)).every((purge) => purge.status === 'FINISHED'), 30_000);
}

/** A downstream processor that acknowledges `purgeId` as done. */
export async function acknowledged(app: App, subject: string, purgeId: string): Promise<void> {
  const ack = `mutation ($purgeId: UInt64!) { acknowledgeCommunityPurge(purgeId: $purgeId, state: DONE) { state } }`;
  await ok(app, ack, { purgeId }, await token(subject, 'community:purge-ack', '1h'));
}

/** Statuses with leave history, and purge receipts, of `users`: what a restore must give back unchanged. */
export async function standing(app: App, users: string[]): Promise<unknown[]> {
  return Promise.all(users.map(async (userId) => [await ok(app, STATUS, { userId }), await ok(app, RECEIPT, { userId })]));
}
