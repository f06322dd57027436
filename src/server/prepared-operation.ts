import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';
import { streamErrorsAsResults } from '../graphql/public-result.js';
import type { TrustedDocuments } from '../graphql/trusted-documents/trusted-documents.js';

/** What a socket or stream operation asks for (graphql-ws `subscribe`, graphql-sse POST). */
export interface OperationParams {
  query?: string | undefined;
  operationName?: string | null | undefined;
  variables?: Record<string, unknown> | null | undefined;
  extensions?: Record<string, unknown> | null | undefined;
}

/** Any Yoga server: graphql-sse's plugin sees it untyped. */
type Envelops = Pick<YogaServerInstance<Record<string, unknown>, Record<string, unknown>>, 'getEnveloped'>;

export type OperationOutcome = ExecutionResult | AsyncIterableIterator<ExecutionResult>;

/** An operation that passed every check before execution: run it once. */
export interface PreparedOperation {
  args: ExecutionArgs;
  subscription: boolean;
  /** Executes (a result) or subscribes (a stream whose error, such as token expiry, is its last event). */
  run(): Promise<OperationOutcome>;
}

export type Preparation = PreparedOperation | { errors: readonly GraphQLError[] };

/**
 * The bulk door for one operation, asked before anything is parsed: the function that gives its
 * place back once the operation has run, or the refusal to answer (OVERLOADED).
 */
export type OperationDoor = () => Promise<(() => void) | GraphQLError>;

const noPlace = () => undefined;

/**
 * The one pipeline for operations outside Yoga's HTTP handler (graphql-ws, graphql-sse's single
 * connection mode): the trusted document, then Yoga's envelop (so the plugins of HTTP apply:
 * limits, authorization, masking, metrics), parse, validate and context. Each step that refuses
 * answers errors and stops; nothing past a refusal runs. Rules every transport must share go here,
 * in this order: before parsing, nothing costly has happened yet. First of all, `door`: the bulk
 * door of HTTP, by the message's byte length (a large operation waits for a place, or is refused,
 * and holds it until it has run).
 *
 * `scope` is what the transport hands Yoga's context: the HTTP request (SSE), or the socket's
 * credential and a request id (WebSocket).
 */
export async function prepareOperation(
  yoga: Envelops,
  trusted: TrustedDocuments,
  params: OperationParams,
  scope: Record<string, unknown>,
  door?: OperationDoor,
): Promise<Preparation> {
  const place = door ? await door() : noPlace;
  if (place instanceof GraphQLError) return { errors: [place] };
  try {
    const prepared = await prepareAdmitted(yoga, trusted, params, scope);
    if ('errors' in prepared) place();
    return 'errors' in prepared ? prepared : { ...prepared, run: () => prepared.run().finally(place) };
  } catch (error) {
    place();
    throw error;
  }
}

async function prepareAdmitted(
  yoga: Envelops,
  trusted: TrustedDocuments,
  params: OperationParams,
  scope: Record<string, unknown>,
): Promise<Preparation> {
  const resolved = await trusted.resolve(params);
  if (resolved instanceof GraphQLError) return { errors: [resolved] };
  const enveloped = yoga.getEnveloped({ ...scope, params: { ...params, query: resolved.query } });
  let document: DocumentNode;
  try {
    document = enveloped.parse(resolved.query);
  } catch (error) {
    return { errors: [error instanceof GraphQLError ? error : new GraphQLError('The document could not be parsed.')] };
  }
  const errors = enveloped.validate(enveloped.schema, document);
  if (errors.length > 0) return { errors };
  const operationName = params.operationName ?? null;
  const args: ExecutionArgs = {
    schema: enveloped.schema,
    document,
    operationName,
    variableValues: params.variables ?? null,
    contextValue: await enveloped.contextFactory(),
  };
  const subscription = getOperationAST(document, operationName)?.operation === 'subscription';
  return {
    args,
    subscription,
    run: async () =>
      (subscription ? await streamErrorsAsResults(enveloped.subscribe(args)) : await enveloped.execute(args)) as OperationOutcome,
  };
}
