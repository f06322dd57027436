import type { App } from '../../src/app.js';
import { type GraphQLResponse, token } from './harness.js';

/** A POST by a writer and admin, answered raw: status and Retry-After as well as the body. */
export async function rawPost(app: App, query: string, variables: Record<string, unknown>, signal?: AbortSignal) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      authorization: `Bearer ${await token('1', 'signals:write community:admin')}`,
    },
    body: JSON.stringify({ query, variables }),
    signal,
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as Omit<GraphQLResponse, 'status'>,
  };
}
