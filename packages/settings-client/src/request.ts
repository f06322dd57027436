import { DOCUMENT_IDS, type OperationName } from './documents.js';
import { SettingsClientError, type GraphQLErrorBody } from './errors.js';

/** A request body naming a trusted document by its id instead of sending its text (accepted in `only` mode). */
export function operationBody(operationName: OperationName, variables: Record<string, unknown> = {}) {
  return { operationName, variables, extensions: { persistedQuery: { version: 1, sha256Hash: DOCUMENT_IDS[operationName] } } };
}

/** One query or mutation by id: its one root field's value, or a SettingsClientError. */
export async function postOperation<T>(
  fetcher: typeof fetch,
  url: string,
  token: string,
  operationName: OperationName,
  variables: Record<string, unknown> | undefined,
  timeoutMs: number,
): Promise<T> {
  // The whole exchange, body included: a server that accepts and never answers is a network failure.
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetcher(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify(operationBody(operationName, variables)),
      signal,
    });
  } catch (error) {
    throw SettingsClientError.network(signal.aborted ? timedOut(timeoutMs) : error);
  }
  let body: { data?: Record<string, T> | null; errors?: GraphQLErrorBody[] };
  try {
    body = (await response.json()) as typeof body;
  } catch (error) {
    // A cut answer is the network's doing; any other unreadable one is the status's.
    throw response.ok
      ? SettingsClientError.network(signal.aborted ? timedOut(timeoutMs) : error)
      : SettingsClientError.of(undefined, response);
  }
  const value = body.data ? Object.values(body.data)[0] : undefined;
  if (body.errors?.length || value === undefined || value === null) throw SettingsClientError.of(body.errors?.[0], response);
  return value;
}

function timedOut(timeoutMs: number): Error {
  return new Error(`no answer within ${timeoutMs} ms (requestTimeoutMs)`);
}
