import type pg from 'pg';
import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import { gql } from './harness.js';

/** Signals with event ids as the tests send them (test/signal-event-ids.test.ts, test/signal-resend.test.ts), and what they left. */

const FIELDS = 'signalId status forwarded cohortsAttributed duplicate';
const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { ${FIELDS} } }`;
const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { ${FIELDS} } }`;
export const LEAVE = `mutation ($userId: UInt64!) { leaveCommunityLayer(userId: $userId) { leftAtNs } }`;
export const REJOIN = `mutation ($userId: UInt64!) { rejoinCommunityLayer(userId: $userId) { status } }`;
export const HISTORY = `query ($userId: UInt64!) { communityLayerStatus(userId: $userId) { history { gatedSignals } } }`;
const AGGREGATES = `query ($itemId: ID!) {
  community: communityItemAggregate(itemId: $itemId) { signalCount weightSum }
  c1: cohortItemAggregate(cohortId: "c1", itemId: $itemId) { signalCount weightSum }
  c2: cohortItemAggregate(cohortId: "c2", itemId: $itemId) { signalCount weightSum }
}`;

export interface Outcome {
  signalId: string;
  status: 'ACTIVE' | 'LEFT';
  forwarded: boolean;
  cohortsAttributed: number;
  duplicate: boolean;
}

/** `N` outcomes, to name each of a batch's answers. */
export type Outcomes<N extends number, Taken extends Outcome[] = []> = Taken['length'] extends N ? Taken : Outcomes<N, [...Taken, Outcome]>;

export async function send(app: App, input: Record<string, unknown>): Promise<Outcome> {
  const response = await gql(app, SIGNAL, { input });
  expect(response.errors).toBeUndefined();
  return response.data!.signal;
}

export async function sendMany(app: App, inputs: Record<string, unknown>[]): Promise<Outcome[]> {
  const response = await gql(app, SIGNALS, { inputs });
  expect(response.errors).toBeUndefined();
  return response.data!.signals;
}

export async function aggregates(app: App, itemId: string) {
  return (await gql(app, AGGREGATES, { itemId })).data!;
}

/** Signal rows stored for `userId`, with their event ids. */
export async function storedRows(db: pg.Client, userId: string): Promise<{ id: string; event_id: string | null; forwarded: boolean }[]> {
  const { rows } = await db.query('SELECT id::text, event_id, forwarded FROM signal WHERE user_id = $1 ORDER BY signal.id', [userId]);
  return rows;
}
