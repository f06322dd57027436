import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { freshDatabase, gql, rowCounts, sqlClient, startApp, token } from './support/harness.js';
import { battery, operation, sendHostile } from './support/hostile-requests.js';
import { post } from './support/limit-requests.js';

let app: App;
let production: App;
let db: pg.Client;
let bearer: string;

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  app = await startApp(databaseUrl);
  production = await startApp(databaseUrl, { NODE_ENV: 'production', BODY_LIMIT_BYTES: '65536' }, { membershipSync: false });
  db = await sqlClient(databaseUrl);
  bearer = await token('1', 'community:admin signals:write');
});

afterAll(async () => {
  await db?.end();
  await Promise.all([app?.stop(), production?.stop()]);
});

const apps = () => ({ development: app, production });

describe('malformed and hostile requests', () => {
  it('has a battery of at least 50', () => {
    expect(battery.length).toBeGreaterThanOrEqual(50);
  });

  it.each(battery)('%s: a clear 4xx or GraphQL error, never a 500, nothing written', async (_label, hostile) => {
    const before = await rowCounts(db);
    const response = await sendHostile(hostile, apps(), bearer);
    const text = await response.text();
    expect(response.status).toBeLessThan(500);
    expect(text).not.toMatch(/\bat .+\.(ts|js):\d+|node_modules|SELECT |INSERT /);
    if (response.status < 400) {
      const body = JSON.parse(text) as { errors?: { message: string; extensions?: { code?: string } }[] };
      expect(body.errors?.length).toBeGreaterThan(0);
      expect(body.errors!.every((error) => error.message.length > 0)).toBe(true);
    }
    expect(await rowCounts(db)).toBe(before);
    const alive = await gql(app, '{ communityItemAggregate(itemId: "alive") { signalCount } }');
    expect(alive.errors).toBeUndefined();
  });

  it('field suggestions are hidden in production and shown in development', async () => {
    const query = '{ communityLayerStatu { status } }';
    const dev = await (await sendHostile(operation(query), apps(), bearer)).text();
    const prod = await (await sendHostile({ ...operation(query), target: 'production' }, apps(), bearer)).text();
    expect(dev).toContain('Did you mean');
    expect(prod).not.toContain('Did you mean');
  });

  it('an internal error is masked and carries the request id that the client also gets', async () => {
    const brokenUrl = await freshDatabase();
    const broken = await startApp(brokenUrl, {}, { membershipSync: false });
    const brokenDb = await sqlClient(brokenUrl);
    try {
      await brokenDb.query('DROP TABLE community_item_aggregate CASCADE');
      const response = await fetch(broken.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ query: '{ communityItemAggregate(itemId: "x") { signalCount } }' }),
      });
      const body = (await response.json()) as { errors: { message: string; extensions: { code: string; requestId: string } }[] };
      expect(body.errors[0]!.message).toBe('Unexpected error.');
      expect(body.errors[0]!.extensions.code).toBe('INTERNAL_SERVER_ERROR');
      expect(body.errors[0]!.extensions.requestId).toBe(response.headers.get('x-request-id'));
      expect(JSON.stringify(body)).not.toMatch(/relation|community_item_aggregate|does not exist/);
    } finally {
      await brokenDb.end();
      await broken.stop();
    }
  });
});

describe('bad requests', () => {
  it('a wrong media type is a 415 naming the right one (not a CSRF refusal)', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
      const response = await post(app, JSON.stringify({ query: '{ __typename }' }), { 'content-type': type });
      expect(response.status).toBe(415);
      expect(response.json['errors'][0].extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(response.json['errors'][0].message).toContain('application/json');
      expect(response.text).not.toMatch(/CSRF/i);
    }
  });

  it('bad JSON gets a fixed message that does not echo the body', async () => {
    const secret = 'do-not-echo-7f3a';
    const response = await post(app, `{"query": "{ __typename }", "${secret}`);
    expect(response.status).toBe(400);
    expect(response.json['errors'][0].message).toBe('POST body sent invalid JSON.');
    expect(response.json['errors'][0].extensions).toEqual({ code: 'BAD_REQUEST' });
    expect(response.text).not.toContain(secret);
    expect(response.text).not.toMatch(/Unexpected|position/);
  });
});
