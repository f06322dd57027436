/**
 * A small typed client: the documents and result types come from `examples/codegen.ts`, requests
 * name trusted documents by hash (sha256 of the printed document, as Apollo's persisted-query link
 * computes it) and send no document text. Run it against a server:
 *
 *   npx tsx examples/client.ts http://127.0.0.1:4000/graphql "$TOKEN"   # a token with community:admin signals:write
 */
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import {
  ExampleAggregateDocument,
  ExampleContributionsDocument,
  ExampleLeaveDocument,
  ExampleRejoinDocument,
  ExampleSignalsDocument,
  ExampleStatusDocument,
  type ExampleContributionsQuery,
  type SignalInput,
} from './generated/graphql.js';

export class GraphQLRequestError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export function client(url: string, token: string) {
  return async function request<Result, Variables>(document: TypedDocumentNode<Result, Variables>, variables: Variables): Promise<Result> {
    const sha256Hash = createHash('sha256').update(print(document)).digest('hex');
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ variables, extensions: { persistedQuery: { version: 1, sha256Hash } } }),
    });
    const body = (await response.json()) as { data?: Result | null; errors?: { message: string; extensions?: { code?: string } }[] };
    const error = body.errors?.[0];
    if (error || !body.data) throw new GraphQLRequestError(error?.message ?? `HTTP ${response.status}`, error?.extensions?.code);
    return body.data;
  };
}

export interface ExampleOutcome {
  signalTotal: string;
  weightTotal: string;
  cohortSignalTotal: string;
  gatedSignalTotal: string;
  contributions: number;
  pages: number;
}

/** Leaves, sends signals (held back), rejoins, sends more (forwarded), then reads what they added up to. */
export async function runExample(url: string, token: string, userId: string, itemId: string): Promise<ExampleOutcome> {
  const request = client(url, token);
  const signal = (weight: number): SignalInput => ({ userId, itemId, kind: 'LIKE', weight, context: { cohortIds: ['example-cohort'] } });
  await request(ExampleLeaveDocument, { userId });
  await request(ExampleSignalsDocument, { inputs: [signal(1), signal(2)] });
  await request(ExampleRejoinDocument, { userId });
  const sent = await request(ExampleSignalsDocument, { inputs: [signal(0.1), signal(0.2), signal(1e6)] });
  if (!sent.signals.every((result) => result.forwarded)) throw new Error('signals after rejoining must be forwarded');
  const { communityItemAggregate, cohortItemAggregate } = await request(ExampleAggregateDocument, { itemId, cohortId: 'example-cohort' });
  const status = await request(ExampleStatusDocument, { userId });
  let contributions = 0;
  let pages = 0;
  let after: string | null = null;
  for (;;) {
    const page: ExampleContributionsQuery['communityContributions'] = (
      await request(ExampleContributionsDocument, { userId, first: 2, after })
    ).communityContributions;
    contributions += page.edges.length;
    pages += 1;
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor ?? null;
  }
  return {
    signalTotal: communityItemAggregate.signalTotal,
    weightTotal: communityItemAggregate.weightTotal,
    cohortSignalTotal: cohortItemAggregate.signalTotal,
    gatedSignalTotal: status.communityLayerStatus.history[0]?.gatedSignalTotal ?? '0',
    contributions,
    pages,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [url, token] = process.argv.slice(2);
  if (!url || !token) throw new Error('usage: tsx examples/client.ts <graphql url> <bearer token>');
  console.log(await runExample(url, token, '4200', `example-item-${Date.now()}`));
}
