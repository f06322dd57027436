import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import type { Manifest } from '../src/graphql/trusted-documents/manifest.js';
import { codegenPersistedDocuments } from './support/codegen-persisted.js';
import { freshDatabase, startApp, token } from './support/harness.js';

/**
 * A registered document is found by its sha256 with or without `sha256:`, in every parameter the
 * major clients use: `documentId` (codegen), `extensions.persistedQuery.sha256Hash` (APQ), Relay's
 * `doc_id` and `id`. Documents from codegen's client preset with its defaults, from the server's own
 * manifest, and registered by APQ.
 */
const TEAM = 'query TeamForms($itemId: ID!) { communityItemAggregate(itemId: $itemId) { itemId signalTotal } }';
const APQ = 'query TeamFormsApq($itemId: ID!) { communityItemAggregate(itemId: $itemId) { itemId weightTotal } }';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let only: App;
let allow: App;
let codegenId: string;
let authorization: Record<string, string>;

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  const codegen = await codegenPersistedDocuments(TEAM);
  [codegenId] = Object.keys(codegen) as [string];
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'id-forms-')), 'persisted-documents.json');
  await writeFile(file, JSON.stringify(codegen));
  [only, allow] = await Promise.all([
    startApp(databaseUrl, { GRAPHQL_TRUSTED_DOCUMENTS: 'only', GRAPHQL_TRUSTED_DOCUMENTS_FILES: file }),
    startApp(databaseUrl, {}),
  ]);
  authorization = { authorization: `Bearer ${await token('5', 'community:admin signals:write')}` };
}, 120_000);

afterAll(() => Promise.all([only?.stop(), allow?.stop()]));

async function post(app: App, body: Record<string, unknown>) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...authorization },
    body: JSON.stringify(body),
  });
  // The answer without its extensions (fair share's cost, checked in test/fair-share.test.ts).
  const { data, errors } = (await response.json()) as { data?: Record<string, unknown>; errors?: { extensions?: { code?: string } }[] };
  return { data, errors };
}

/** Every way a client may name `hex`: four parameters, each bare and prefixed. */
function forms(hex: string): [string, Record<string, unknown>][] {
  return [hex, `sha256:${hex}`].flatMap(
    (id) =>
      [
        [`documentId ${id.slice(0, 12)}…`, { documentId: id }],
        [`persistedQuery ${id.slice(0, 12)}…`, { extensions: { persistedQuery: { version: 1, sha256Hash: id } } }],
        [`doc_id ${id.slice(0, 12)}…`, { doc_id: id }],
        [`id ${id.slice(0, 12)}…`, { id }],
      ] as [string, Record<string, unknown>][],
  );
}

describe('persisted ids in every common form', () => {
  it('codegen’s client preset with its defaults writes sha256:<hex>, and the server finds it by every form', async () => {
    expect(codegenId).toMatch(/^sha256:[0-9a-f]{64}$/);
    for (const [form, body] of forms(codegenId.slice('sha256:'.length))) {
      expect({ form, answer: await post(only, { ...body, variables: { itemId: 'f' } }) }).toEqual({
        form,
        answer: { data: { communityItemAggregate: { itemId: 'f', signalTotal: '0' } } },
      });
    }
  });

  it('a document of the server’s own manifest (bare ids) is found with the prefix too', async () => {
    const manifest = JSON.parse(await readFile(new URL('../trusted-documents.json', import.meta.url), 'utf8')) as Manifest;
    const status = manifest.operations.find((operation) => operation.name === 'SettingsStatus')!;
    expect(status.id).toMatch(/^[0-9a-f]{64}$/);
    for (const [form, body] of forms(status.id)) {
      const answer = await post(only, body);
      expect({
        form,
        errors: answer.errors,
        userId: (answer.data?.communityLayerStatus as { userId?: string } | undefined)?.userId,
      }).toEqual({ form, errors: undefined, userId: '5' });
    }
  });

  it('a document APQ registered is found by every form; an unknown prefixed id is PERSISTED_QUERY_NOT_FOUND', async () => {
    const hex = sha256(APQ);
    expect(
      (
        await post(allow, {
          query: APQ,
          variables: { itemId: 'a' },
          extensions: { persistedQuery: { version: 1, sha256Hash: `sha256:${hex}` } },
        })
      ).errors,
    ).toBeUndefined();
    for (const [form, body] of forms(hex)) {
      expect({ form, answer: await post(allow, { ...body, variables: { itemId: 'a' } }) }).toEqual({
        form,
        answer: { data: { communityItemAggregate: { itemId: 'a', weightTotal: '0' } } },
      });
    }
    const unknown = await post(only, { documentId: `sha256:${'0'.repeat(64)}` });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});
