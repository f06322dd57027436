import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { startApp } from '../tooling/start-app.js';
import { freshDatabase, gql, TEST_SECRET, token } from '../test/support/harness.js';
import { launchChromium } from './support/chromium.js';

let app: App;
let browser: Browser;
let context: BrowserContext;
/** Every request the page tried to send anywhere but the server under test. */
const blocked: string[] = [];

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  const config = loadConfig({
    NODE_ENV: 'development',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    AUTH_JWT_SECRET: TEST_SECRET,
  });
  // As `npm start` does in development: GraphiQL gets the all-scopes token.
  const developmentToken = await token('1', 'community:admin signals:write');
  app = await startApp(config, { databaseUrl, authKey: { kind: 'secret', secret: TEST_SECRET }, developmentToken });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  // Offline, or behind a proxy that lets nothing out: only the server itself answers.
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1') return route.continue();
    blocked.push(url.toString());
    return route.abort('internetdisconnected');
  });
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe('GraphiQL', () => {
  it('loads with no network but the server, opens on the README operations, and runs a live subscription', async () => {
    const page = await context.newPage();
    // Its ~9 MB of script compressed on first request: on a busy machine it takes a while to come up.
    page.setDefaultTimeout(90_000);
    // What the page costs on the wire, as the browser counts it (compressed bodies and headers).
    const transfers: Promise<number>[] = [];
    page.on('requestfinished', (request) =>
      transfers.push(request.sizes().then((sizes) => sizes.responseBodySize + sizes.responseHeadersSize)),
    );
    await page.goto(app.url);
    const editor = page.locator('.graphiql-query-editor');
    await editor.getByText('subscription Watch').waitFor();
    await expect(page.locator('.graphiql-editor-tool, .graphiql-editors').first().isVisible()).resolves.toBe(true);

    // Run the Watch subscription from the default document, with the pre-filled development token.
    await page.locator('.graphiql-execute-button').click();
    await page.getByRole('menuitem', { name: 'Watch' }).click();
    const response = page.locator('.graphiql-response');
    await response.getByText('"ACTIVE"').waitFor();

    await gql(app, 'mutation { leaveCommunityLayer(userId: "42") { status } }');
    await response.getByText('"LEFT"').waitFor();
    await gql(app, 'mutation { rejoinCommunityLayer(userId: "42") { status } }');
    await response.getByText('"ACTIVE"').waitFor();

    // Everything it fetched by now (workers and fonts included, the subscription's stream aside).
    const onTheWire = (await Promise.all(transfers)).reduce((sum, bytes) => sum + bytes, 0);
    expect(onTheWire).toBeGreaterThan(500_000);
    expect(onTheWire).toBeLessThan(2 * 1024 * 1024);
    expect(blocked).toEqual([]);
    await page.close();
  }, 180_000);

  it("the README's second tab: in the same profile, its Watch link opens GraphiQL on Watch alone, and ▶ runs it live", async () => {
    // The link exactly as the README gives it, pointed at this server.
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const link = new URL(/\[GraphiQL with only `Watch`\]\((http:[^)\s]+)\)/.exec(readme)![1]!);
    // A profile of its own (the first test's stream aside), shared by both tabs: the first tab's
    // GraphiQL tabs are in its storage when the second opens, as in one browser profile.
    const profile = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    await profile.route('**/*', (route) =>
      new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort('internetdisconnected'),
    );
    const first = await profile.newPage();
    first.setDefaultTimeout(90_000);
    await first.goto(app.url);
    await first.locator('.graphiql-query-editor').getByText('query Before').waitFor();

    const second = await profile.newPage();
    second.setDefaultTimeout(90_000);
    await second.goto(`${app.url}${link.search}`);
    const editor = second.locator('.graphiql-query-editor');
    await editor.getByText('subscription Watch').waitFor();
    expect(await editor.getByText('query Before').count()).toBe(0);
    // One operation in the editor: ▶ runs it at once, no menu to pick from.
    await second.locator('.graphiql-execute-button').click();
    const response = second.locator('.graphiql-response');
    await response.getByText('"ACTIVE"').waitFor();
    await gql(app, 'mutation { leaveCommunityLayer(userId: "42") { status } }');
    await response.getByText('"LEFT"').waitFor();
    await gql(app, 'mutation { rejoinCommunityLayer(userId: "42") { status } }');
    await response.getByText('"ACTIVE"').waitFor();
    await profile.close();
  }, 180_000);
});
