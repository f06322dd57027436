import type { App } from '../../src/app.js';
import type { Operation } from '../../tooling/invariants.js';
import { gql } from './harness.js';

/** Signals, leaves and rejoins sent to one instance of a cluster, recorded for the invariant checks (tooling/invariants.ts). */

const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { signalId forwarded cohortsAttributed } }`;
const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId forwarded cohortsAttributed } }`;

/** One group of signals: an operation per signal, all with the group's start and end. Throws on errors. */
export async function signalsOn(app: App, inputs: { userId: string }[], instance: number): Promise<Operation[]> {
  const start = performance.now();
  const response = await gql(app, SIGNALS, { inputs });
  const end = performance.now();
  if (response.errors) throw new Error(`the group failed: ${JSON.stringify(response.errors)}`);
  return response.data!.signals.map((outcome: { signalId: string; forwarded: boolean; cohortsAttributed: number }, i: number) => ({
    kind: 'signal' as const,
    userId: inputs[i]!.userId,
    instance,
    start,
    end,
    ok: true,
    ...outcome,
  }));
}

/** One single signal (the `signal` field). */
export async function signalOn(app: App, input: { userId: string }, instance: number): Promise<Operation> {
  const start = performance.now();
  const response = await gql(app, SIGNAL, { input });
  const end = performance.now();
  const ok = response.status === 200 && !response.errors;
  return { kind: 'signal', userId: input.userId, instance, start, end, ok, ...(ok ? response.data!.signal : {}) };
}

export async function membershipOn(app: App, kind: 'leave' | 'rejoin', userId: string, instance: number): Promise<Operation> {
  const start = performance.now();
  const response = await gql(app, `mutation ($userId: UInt64!) { ${kind}CommunityLayer(userId: $userId) { status } }`, { userId });
  return { kind, userId, instance, start, end: performance.now(), ok: !response.errors };
}
