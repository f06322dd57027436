import { expect, onTestFinished } from 'vitest';
import type { App } from '../../src/app.js';
import { startApp, token } from './harness.js';

/** Requests that test the operation limits and budgets (test/limits.test.ts) and bad requests, sent as raw bodies and read as the spec's client would. */

const MEDIA = 'application/graphql-response+json';

/** POSTs a raw body and reads the response as the spec's client would. */
export async function post(target: App, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(target.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: MEDIA,
      authorization: `Bearer ${await token('1', 'community:admin signals:write')}`,
      ...headers,
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type') ?? '', text, json: JSON.parse(text) as Record<string, any> };
}

export const operation = (query: string, variables?: Record<string, unknown>) => JSON.stringify({ query, variables });

/** A rejected request: a 400 with the GraphQL response media type, no `data`, one error with `code`. */
export async function expectRefused(target: App, body: string, code: string, headers?: Record<string, string>) {
  const response = await post(target, body, headers);
  expect(response.status).toBe(400);
  expect(response.type).toContain(MEDIA);
  expect(response.json).not.toHaveProperty('data');
  const codes = (response.json['errors'] as { extensions?: { code?: string } }[]).map((error) => error.extensions?.code);
  expect(codes).toContain(code);
  return response.json['errors'] as { message: string; extensions: Record<string, unknown> }[];
}

export const signalsMutation = (aliases: number) =>
  `mutation ($x: [SignalInput!]!) { ${Array.from({ length: aliases }, (_, i) => `a${i}: signals(inputs: $x) { signalId }`).join(' ')} }`;
export const inputs = (count: number, cohorts: number, userId = '700') =>
  Array.from({ length: count }, (_, i) => ({
    userId,
    itemId: `budget-${i % 7}`,
    kind: 'VIEW',
    context: { cohortIds: Array.from({ length: cohorts }, (_, c) => `cohort-${c}`) },
  }));

/** Another instance on the same database with other limits (no listener), stopped when the test ends. */
export async function instanceWith(databaseUrl: string, environment: Record<string, string>): Promise<App> {
  const app = await startApp(databaseUrl, environment, { membershipSync: false });
  onTestFinished(() => app.stop());
  return app;
}
