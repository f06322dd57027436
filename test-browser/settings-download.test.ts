import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { freshDatabase, gql, startApp, token } from '../test/support/harness.js';
import { launchChromium } from './support/chromium.js';

const USER = '4343';

let app: App;
let browser: Browser;

beforeAll(async () => {
  app = await startApp(await freshDatabase());
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe('"Download my data" on the settings page', () => {
  it("saves the user's export: their records, closed by the signed seal", async () => {
    const send = `mutation { signals(inputs: [{ userId: "${USER}", itemId: "a", kind: LIKE }, { userId: "${USER}", itemId: "b", kind: VIEW }]) { forwarded } }`;
    expect((await gql(app, send)).errors).toBeUndefined();
    const page = await browser.newPage({ acceptDownloads: true });
    await page.goto(`${new URL('/settings', app.url)}#token=${await token(USER)}`);
    await page.waitForSelector('html[data-live="on"]');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download my data' }).click()]);
    expect(download.suggestedFilename()).toBe(`community-export-${USER}.ndjson`);
    const stream = await download.createReadStream();
    let body = '';
    for await (const chunk of stream) body += chunk;
    const lines = body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.type)).toEqual(['status', 'signal', 'signal', 'contribution', 'contribution', 'seal']);
    expect(lines.at(-1)).toMatchObject({ userId: USER, counts: { signal: 2, contribution: 2 }, jws: expect.any(String) });
    await expect(page.locator('#download-state').textContent()).resolves.toContain('Downloaded');
    await page.close();
  });
});
