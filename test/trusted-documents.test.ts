import { readFile } from 'node:fs/promises';
import { DOCUMENT_IDS } from '@community-layer/settings-client';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { App } from '../src/app.js';
import { buildManifest, printManifest, type Manifest } from '../src/graphql/trusted-documents/manifest.js';
import { freshDatabase, startApp, token } from './support/harness.js';

let open: App;
let production: App;
let manifest: Manifest;

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  [open, production] = await Promise.all([
    startApp(databaseUrl),
    startApp(databaseUrl, { NODE_ENV: 'production', GRAPHQL_TRUSTED_DOCUMENTS: 'only' }, { membershipSync: false }),
  ]);
  manifest = JSON.parse(await readFile(new URL('../trusted-documents.json', import.meta.url), 'utf8')) as Manifest;
});

afterAll(async () => {
  await Promise.all([open?.stop(), production?.stop()]);
});

const idOf = (name: string) => manifest.operations.find((operation) => operation.name === name)!.id;
const persisted = (name: string, variables?: Record<string, unknown>) => ({
  variables,
  extensions: { persistedQuery: { version: 1, sha256Hash: idOf(name) } },
});

async function post(app: App, body: unknown, bearer?: string) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      authorization: `Bearer ${bearer ?? (await token('1', 'community:admin signals:write'))}`,
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as { data?: any; errors?: { message: string; extensions?: { code?: string } }[] },
  };
}

describe('trusted documents', () => {
  it('the checked-in manifest is what the clients’ operation files build (run `npm run documents`)', async () => {
    const committed = await readFile(new URL('../trusted-documents.json', import.meta.url), 'utf8');
    expect(committed).toBe(printManifest(await buildManifest(new URL('..', import.meta.url).pathname)));
    expect(manifest.operations.map((operation) => operation.name)).toEqual(
      expect.arrayContaining(['SettingsLeave', 'SettingsWatch', 'ExampleSignals']),
    );
  });

  it('GRAPHQL_TRUSTED_DOCUMENTS=only in production refuses arbitrary documents, and runs trusted ones by hash', async () => {
    const arbitrary = await post(production, { query: '{ communityItemAggregate(itemId: "x") { signalTotal } }' });
    expect(arbitrary.status).toBe(400);
    expect(arbitrary.body.errors![0]!.extensions!.code).toBe('PERSISTED_QUERY_ONLY');
    expect(arbitrary.body.data).toBeUndefined();

    const trusted = await post(production, persisted('ExampleAggregate', { itemId: 'x', cohortId: 'c' }));
    expect(trusted.status).toBe(200);
    expect(trusted.body.data.communityItemAggregate).toEqual({ itemId: 'x', signalTotal: '0', weightTotal: '0' });

    const unknown = await post(production, { extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } } });
    expect(unknown.body.errors![0]!.extensions!.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('the default mode runs both, and a trusted hash still goes through authorization', async () => {
    expect((await post(open, { query: '{ __typename }' })).body.data).toEqual({ __typename: 'Query' });
    const forbidden = await post(open, persisted('ExampleLeave', { userId: '901' }), await token('902'));
    expect(forbidden.body.errors![0]!.extensions!.code).toBe('FORBIDDEN');
  });

  it('over WebSocket too: arbitrary documents are refused, trusted subscriptions run', async () => {
    const client = createWsClient({
      url: production.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${await token('903')}` },
      retryAttempts: 0,
    });
    try {
      const refused = await client
        .iterate({ query: 'subscription { communityLayerStatusChanged { status } }' })
        .next()
        .then(
          (result) => JSON.stringify(result.value),
          (errors: unknown) => JSON.stringify(errors),
        );
      expect(refused).toContain('PERSISTED_QUERY_ONLY');
      const watch = client.iterate({ query: '', extensions: persisted('SettingsWatch').extensions });
      expect(((await watch.next()).value as { data: any }).data.communityLayerStatusChanged).toMatchObject({
        userId: '903',
        status: 'ACTIVE',
      });
      await watch.return?.();
    } finally {
      await client.dispose();
    }
  });

  it('the settings client has the ids of its operations built in, as the manifest has them', () => {
    const names = Object.keys(DOCUMENT_IDS) as (keyof typeof DOCUMENT_IDS)[];
    expect(names).toEqual(
      expect.arrayContaining([
        'SettingsStatus',
        'SettingsLeave',
        'SettingsRejoin',
        'SettingsPurge',
        'SettingsWatch',
        'SettingsPurgeProgress',
      ]),
    );
    for (const name of names) expect(DOCUMENT_IDS[name]).toBe(idOf(name));
  });

  it('GraphiQL is served offline in development and is off in production', async () => {
    const page = await fetch(open.url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    // Everything it loads comes from this server (no CDN): same-origin paths only.
    const sources = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((match) => match[1]);
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) expect(source).toMatch(/^\/graphiql\/assets\//);
    expect(html).toContain('mutation Leave');
    expect(html).toContain('"additionalHeaders":{"x-graphql-yoga-csrf":"graphiql"}');
    const off = await fetch(production.url, { headers: { accept: 'text/html' } });
    expect(off.headers.get('content-type') ?? '').not.toContain('text/html');
  });
});
