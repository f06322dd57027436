import { randomUUID } from 'node:crypto';
import type { App } from '../../src/app.js';
import { token } from './harness.js';
import type { Operation } from '../../tooling/invariants.js';

const SIGNAL = `mutation ($input: SignalInput!) { signal(input: $input) { signalId forwarded cohortsAttributed } }`;
const SIGNALS = `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { signalId forwarded cohortsAttributed } }`;
const LEAVE = `mutation ($userId: UInt64!) { leaveCommunityLayer(userId: $userId) { leftAtNs } }`;
const REJOIN = `mutation ($userId: UInt64!) { rejoinCommunityLayer(userId: $userId) { history(last: 1) { leftAtNs rejoinedAtNs } } }`;

/** What clients saw: every operation once (retried until acknowledged), and the boundaries acknowledged. */
export interface FailoverLoad {
  history: Operation[];
  leaves: { userId: string; leftAtNs: string }[];
  rejoins: { userId: string; leftAtNs: string; rejoinedAtNs: string }[];
  /** 503s with Retry-After, answered and retried. */
  retried: number;
  /** Anything but a success or a 503 with Retry-After: must stay empty. */
  unexpected: string[];
  /** Acknowledged operations by instance, to wait for progress. */
  acknowledged: number[];
  stop(): Promise<void>;
}

const headers = (bearer: string) => ({
  'content-type': 'application/json',
  accept: 'application/graphql-response+json',
  authorization: `Bearer ${bearer}`,
});

/**
 * `clients` loops per instance of single and batched signals (each with an event id), leaves and
 * rejoins over `users`. A client retries an operation after a 503 until it is acknowledged, as a
 * client with event ids can: so each recorded operation spans all its attempts, and an unanswered
 * attempt that committed anyway is covered by the same record.
 */
export function startFailoverLoad(apps: App[], options: { users: string[]; clients: number }): FailoverLoad {
  const load: FailoverLoad = {
    history: [],
    leaves: [],
    rejoins: [],
    retried: 0,
    unexpected: [],
    acknowledged: apps.map(() => 0),
    stop: async () => {},
  };
  let running = true;
  const bearer = token('1', 'community:admin signals:write', '1h');

  /** Sends until acknowledged (or the load stops); the data of the final answer. */
  const send = async (instance: number, query: string, variables: Record<string, unknown>): Promise<Record<string, any> | null> => {
    for (;;) {
      try {
        const response = await fetch(apps[instance]!.url, {
          method: 'POST',
          headers: headers(await bearer),
          body: JSON.stringify({ query, variables }),
          signal: AbortSignal.timeout(60_000),
        });
        const body = (await response.json()) as { data?: Record<string, any>; errors?: { extensions?: { code?: string } }[] };
        if (response.status === 200 && body.data && !body.errors) return body.data;
        if (response.status !== 503 || !response.headers.get('retry-after'))
          load.unexpected.push(`${response.status} ${JSON.stringify(body)}`);
        else load.retried++;
      } catch (error) {
        load.unexpected.push(String(error));
      }
      if (!running) return null;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };

  const signalInput = (userId: string) => ({
    userId,
    itemId: `item-${Math.floor(Math.random() ** 3 * 20)}`,
    kind: 'VIEW',
    eventId: randomUUID(),
    context: { cohortIds: Array.from({ length: Math.floor(Math.random() * 3) }, (_, i) => `cohort-${i}`) },
  });

  const client = async (instance: number) => {
    while (running) {
      const userId = options.users[Math.floor(Math.random() * options.users.length)]!;
      const roll = Math.random();
      const start = performance.now();
      if (roll < 0.1) {
        const data = await send(instance, LEAVE, { userId });
        if (!data) return;
        load.history.push({ kind: 'leave', userId, instance, start, end: performance.now(), ok: true });
        load.leaves.push({ userId, leftAtNs: data.leaveCommunityLayer.leftAtNs });
      } else if (roll < 0.2) {
        const data = await send(instance, REJOIN, { userId });
        if (!data) return;
        load.history.push({ kind: 'rejoin', userId, instance, start, end: performance.now(), ok: true });
        // The history is read after the rejoin committed: a leave from another client may already be newer.
        const [episode] = data.rejoinCommunityLayer.history;
        if (episode?.rejoinedAtNs) load.rejoins.push({ userId, ...episode });
      } else {
        const inputs = Array.from({ length: roll < 0.6 ? 1 : 5 }, () => signalInput(userId));
        const data = inputs.length === 1 ? await send(instance, SIGNAL, { input: inputs[0] }) : await send(instance, SIGNALS, { inputs });
        if (!data) return;
        const end = performance.now();
        for (const result of data.signals ?? [data.signal])
          load.history.push({ kind: 'signal', userId, instance, start, end, ok: true, ...result });
      }
      load.acknowledged[instance]!++;
    }
  };

  const loops = apps.flatMap((_, instance) => Array.from({ length: options.clients }, () => client(instance)));
  load.stop = async () => {
    running = false;
    await Promise.all(loops);
  };
  return load;
}
