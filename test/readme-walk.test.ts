import { readdir, readFile } from 'node:fs/promises';
import { Kind, parse, validate, type OperationDefinitionNode } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../src/api/schema.js';
import type { App } from '../src/app.js';
import { GRAPHIQL_OPERATIONS_FILE } from '../src/server/graphiql.js';
import { token, useCluster } from './support/harness.js';

/**
 * The README's first walk (the operations GraphiQL opens with; test/schema-docs.test.ts checks the
 * README shows this very file), run the way a newcomer runs it: the whole document sent each time,
 * one named operation after another, top to bottom, as the development admin token GraphiQL holds.
 */
let app: App;
useCluster([{}], (cluster) => ([app] = cluster.apps as [App]));

let document = '';
let adminToken = '';
beforeAll(async () => {
  document = await readFile(new URL(`../${GRAPHIQL_OPERATIONS_FILE}`, import.meta.url), 'utf8');
  adminToken = await token('1', 'community:admin signals:write', '1h');
});

function operations(): OperationDefinitionNode[] {
  return parse(document).definitions.filter(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
}

async function run(operationName: string): Promise<Record<string, any>> {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ query: document, operationName }),
  });
  const body = (await response.json()) as { data?: Record<string, any>; errors?: unknown[] };
  expect(body.errors, operationName).toBeUndefined();
  expect(response.status, operationName).toBe(200);
  return body.data!;
}

interface Totals {
  community: { signalTotal: string; weightTotal: string };
  berlin: { signalTotal: string; weightTotal: string };
}

const totals = (data: Record<string, any>): Totals => ({ community: data.communityItemAggregate, berlin: data.cohortItemAggregate });
const moved = (before: Totals['community'], after: Totals['community']) => ({
  signals: BigInt(after.signalTotal) - BigInt(before.signalTotal),
  weight: Number(after.weightTotal) - Number(before.weightTotal),
});

/** Every step of the walk, in order, with what it must show. */
async function walk(): Promise<void> {
  const before = totals(await run('Before'));

  const left = (await run('Leave')).leaveCommunityLayer;
  expect(left).toMatchObject({ userId: '42', status: 'LEFT' });

  const gated = (await run('SignalWhileLeft')).signal;
  expect(gated).toMatchObject({ status: 'LEFT', forwarded: false, cohortsAttributed: 0, duplicate: false });

  const status = (await run('Status')).communityLayerStatus;
  expect(status.status).toBe('LEFT');
  expect(status.history.at(-1)).toMatchObject({ leftAtNs: left.leftAtNs, rejoinedAtNs: null, gatedSignalTotal: '1' });

  const rejoined = (await run('Rejoin')).rejoinCommunityLayer;
  expect(rejoined.status).toBe('ACTIVE');
  expect(rejoined.history.at(-1)).toMatchObject({ leftAtNs: left.leftAtNs, gatedSignalTotal: '1' });
  expect(rejoined.history.at(-1).rejoinedAtNs).not.toBeNull();

  const forwarded = (await run('SignalAfterRejoin')).signal;
  expect(forwarded).toMatchObject({ status: 'ACTIVE', forwarded: true, cohortsAttributed: 2, duplicate: false });
  expect(forwarded.signalId).not.toBe(gated.signalId);

  // Only the forwarded like moved them: one signal, a LIKE's default weight of 5.
  const after = totals(await run('After'));
  expect(moved(before.community, after.community)).toEqual({ signals: 1n, weight: 5 });
  expect(moved(before.berlin, after.berlin)).toEqual({ signals: 1n, weight: 5 });
}

describe("the README's first walk through GraphiQL", () => {
  it('is a valid document whose operations come in the order the README walks them', () => {
    expect(validate(schema, parse(document))).toEqual([]);
    expect(operations().map((operation) => `${operation.operation} ${operation.name?.value}`)).toEqual([
      'subscription Watch',
      'query Before',
      'mutation Leave',
      'mutation SignalWhileLeft',
      'query Status',
      'mutation Rejoin',
      'mutation SignalAfterRejoin',
      'query After',
    ]);
  });

  it('run in order, shows the gate: the signal while LEFT is held back, the one after rejoining moves the aggregates', async () => {
    await walk();
  });

  it('run again, moves the aggregates again (no fixed eventId makes a re-run a duplicate)', async () => {
    await walk();
    await walk();
  });

  it('Watch sends the current state first', async () => {
    const abort = new AbortController();
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ query: document, operationName: 'Watch' }),
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!/event: next\ndata: .*\n/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    abort.abort();
    const event = JSON.parse(/event: next\ndata: (.*)\n/.exec(text)![1]!) as { data: { communityLayerStatusChanged: { status: string } } };
    expect(event.data.communityLayerStatusChanged.status).toBe('ACTIVE');
  });
});

describe('the GraphQL examples of the README and docs/', () => {
  it('are valid against the schema', async () => {
    const docs = (await readdir(new URL('../docs/', import.meta.url))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
    const examples: { file: string; text: string }[] = [];
    for (const file of ['README.md', ...docs]) {
      const markdown = await readFile(new URL(`../${file}`, import.meta.url), 'utf8');
      for (const [, text] of markdown.matchAll(/```graphql\n([\s\S]*?)```/g)) examples.push({ file, text: text! });
    }
    expect(examples.map((example) => example.file)).toEqual(expect.arrayContaining(['README.md', 'docs/api.md']));
    for (const { file, text } of examples) expect(validate(schema, parse(text)).map(String), file).toEqual([]);
  });
});
