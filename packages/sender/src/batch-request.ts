import { createHash } from 'node:crypto';
import { retryAfter } from './backoff.js';
import type { SenderSendSignalsMutation } from './operation-types.js';

/** operations.graphql, printed: the server's manifest has it under this text's sha256. */
export const SEND_SIGNALS = `mutation SenderSendSignals($inputs: [SignalInput!]!) {
  sendSignals(inputs: $inputs, invalid: SKIP) {
    items {
      ... on SignalResult {
        signalId
        forwarded
        duplicate
      }
      ... on InvalidSignal {
        index
        argument
        message
      }
    }
  }
}`;
const SEND_SIGNALS_HASH = createHash('sha256').update(SEND_SIGNALS).digest('hex');

/** One signal's answer: stored (and whether forwarded, or a duplicate), or refused with the argument and why. */
export type Item = SenderSendSignalsMutation['sendSignals']['items'][number];

/** What one request got back. */
export type Reply =
  | { kind: 'items'; items: Item[] }
  /** The call was refused for these inputs (malformed values GraphQL's coercion caught): drop them, send the rest. */
  | { kind: 'invalid'; invalid: Map<number, { argument: string; reason: string }> }
  | { kind: 'retry'; retryAfterSeconds: number | null; reason: string; status: number | null }
  | { kind: 'fatal'; reason: string; status: number };

interface GraphQLErrorBody {
  message: string;
  extensions?: { code?: string; argument?: string; retryAfterSeconds?: number };
}

/** Trouble that passes: retried no sooner than Retry-After (the codes of 503 and 429 answers). */
const RETRY_CODES = new Set(['SERVICE_UNAVAILABLE', 'OVERLOADED', 'RATE_LIMITED']);
const RETRY_STATUSES = new Set([429, 503]);

/** The request body around the signals' JSON texts: everything but them, serialized once. */
const BODY_START = `{"query":${JSON.stringify(SEND_SIGNALS)},"variables":{"inputs":`;
const BODY_END = `},"extensions":${JSON.stringify({ persistedQuery: { version: 1, sha256Hash: SEND_SIGNALS_HASH } })}}`;

/**
 * One POST of `sendSignals(invalid: SKIP)`: its hash plus its text, so it runs in `only` and `allow`
 * mode alike. `inputs` are the signals' JSON texts, as send() measured them: joined, not
 * serialized a second time. `signal` aborts it (the request timeout, or close's deadline).
 */
export async function postBatch(
  fetcher: typeof fetch,
  url: string,
  token: string,
  inputs: readonly string[],
  signal: AbortSignal,
): Promise<Reply> {
  let response: Response;
  let body: { data?: Partial<SenderSendSignalsMutation> | null; errors?: GraphQLErrorBody[] } | null;
  try {
    response = await fetcher(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
        authorization: `Bearer ${token}`,
      },
      body: `${BODY_START}[${inputs.join(',')}]${BODY_END}`,
      signal,
    });
    // A 429 or 503 from a proxy or rate limiter may carry no JSON: its status and Retry-After say enough.
    body = (RETRY_STATUSES.has(response.status) ? await response.json().catch(() => null) : await response.json()) as typeof body;
  } catch (error) {
    // No answer, or a cut one: the batch may or may not be stored; its event ids make a resend safe.
    return { kind: 'retry', retryAfterSeconds: null, reason: error instanceof Error ? error.message : String(error), status: null };
  }
  const errors = body?.errors ?? [];
  const items = body?.data?.sendSignals?.items;
  if (items && errors.length === 0) return { kind: 'items', items };
  const later = retryAfter(response.headers.get('retry-after'));
  if (RETRY_STATUSES.has(response.status) || errors.some((error) => RETRY_CODES.has(error.extensions?.code ?? ''))) {
    const reason = errors[0]?.message ?? `HTTP ${response.status}`;
    return { kind: 'retry', retryAfterSeconds: later ?? errors[0]?.extensions?.retryAfterSeconds ?? null, reason, status: response.status };
  }
  const invalid = new Map<number, { argument: string; reason: string }>();
  for (const error of errors) {
    const index = /^inputs\[(\d+)\]/.exec(error.extensions?.argument ?? '')?.[1];
    if (error.extensions?.code === 'BAD_USER_INPUT' && index !== undefined)
      invalid.set(Number(index), { argument: error.extensions.argument!, reason: error.message });
  }
  // graphql-js stops at 50 variable errors: drop those named, the next round names the rest.
  if (invalid.size > 0) return { kind: 'invalid', invalid };
  return { kind: 'fatal', reason: errors[0]?.message ?? `HTTP ${response.status}`, status: response.status };
}
