import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga } from 'graphql-yoga';

interface EchoInput {
  userId: string;
  context?: { cohortIds?: string[] | null } | null;
}

/**
 * A bare graphql-yoga server (no auth, no plugins, no database) with the service's signal input
 * types, echoing each input into a result of the same shape: what the framework alone costs for the
 * same operation and variables.
 */
export async function bareYogaEcho(): Promise<BareServer> {
  const echo = (input: EchoInput) => ({
    signalId: input.userId,
    status: 'ACTIVE',
    forwarded: true,
    cohortsAttributed: input.context?.cohortIds?.length ?? 0,
  });
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: `
        scalar UInt64
        scalar DateTime
        enum SignalKind { VIEW CLICK LIKE SHARE SAVE SKIP DISLIKE }
        enum MembershipStatus { ACTIVE LEFT }
        input SignalContext { cohortIds: [ID!] surface: String }
        input SignalInput { userId: UInt64! itemId: ID! kind: SignalKind! weight: Float occurredAt: DateTime context: SignalContext eventId: String }
        type SignalResult { signalId: ID! status: MembershipStatus! forwarded: Boolean! cohortsAttributed: Int! }
        type Query { ok: Boolean }
        type Mutation { signal(input: SignalInput!): SignalResult! signals(inputs: [SignalInput!]!): [SignalResult!]! }`,
      resolvers: {
        Mutation: {
          signal: (_root: unknown, { input }: { input: EchoInput }) => echo(input),
          signals: (_root: unknown, { inputs }: { inputs: EchoInput[] }) => inputs.map(echo),
        },
      },
    }),
    logging: false,
  });
  return serveOnLoopback(yoga);
}

export interface BareServer {
  url: string;
  close(): Promise<void>;
}

/** A plain Node server for a bare Yoga instance on a free loopback port: the ceilings' server. */
export async function serveOnLoopback(handler: http.RequestListener): Promise<BareServer> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
