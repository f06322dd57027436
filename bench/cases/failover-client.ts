import type { App } from '../../src/app.js';

/** One operation to the app as the failover case's clients send it: answered 200 without errors, within 30 s. */
export async function post(app: App, token: string, query: string, variables: Record<string, unknown>): Promise<{ ok: boolean }> {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json()) as { errors?: unknown[] };
  return { ok: response.status === 200 && !body.errors };
}
