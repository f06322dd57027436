import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { freshDatabase, gql, startApp, token } from '../test/support/harness.js';
import { launchChromium } from './support/chromium.js';

const USER = '4242';
const STATUS = `{ communityLayerStatus(userId: "${USER}") { status leftAtNs history { leftAtNs rejoinedAtNs } } }`;

let app: App;
let browser: Browser;
let settingsUrl: string;
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  app = await startApp(databaseUrl);
  browser = await launchChromium();
  settingsUrl = new URL('/settings', app.url).toString();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function openSettings(bearer: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  await page.goto(`${settingsUrl}#token=${bearer}`);
  await page.waitForSelector('html[data-live="on"]');
  return page;
}

async function apiStatus() {
  return (await gql(app, STATUS)).data!.communityLayerStatus;
}

describe('the settings page in a real browser', () => {
  it('leaves and rejoins, agrees with the API, and follows changes made elsewhere live', async () => {
    const userToken = await token(USER);
    const page = await openSettings(userToken);
    expect(page.url()).not.toContain('token=');
    await expect(page.locator('#status').textContent()).resolves.toContain('part of the community layer');

    await page.getByRole('button', { name: 'Leave the community layer' }).click();
    const dialog = page.getByRole('dialog', { name: 'Leave the community layer?' });
    await expect(dialog.textContent()).resolves.toContain('none of your new activity reaches shared');
    await dialog.getByRole('button', { name: 'Leave' }).click();
    await page.waitForSelector('html[data-status="LEFT"]');
    const afterLeave = await apiStatus();
    expect(afterLeave.status).toBe('LEFT');
    expect(await page.locator('#boundary time').getAttribute('data-ns')).toBe(afterLeave.leftAtNs);
    expect(await page.locator('#history-rows tr').count()).toBe(1);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('rejoin');

    await page.getByRole('button', { name: 'Rejoin the community layer' }).click();
    await page.waitForSelector('html[data-status="ACTIVE"]');
    expect((await apiStatus()).status).toBe('ACTIVE');

    // Another device (a second browser context) leaves: this page follows by itself.
    const otherDevice = await browser.newContext();
    const second = await otherDevice.newPage();
    await second.goto(`${settingsUrl}#token=${userToken}`);
    await second.waitForSelector('html[data-live="on"]');
    await second.getByRole('button', { name: 'Leave the community layer' }).click();
    await second.getByRole('dialog').getByRole('button', { name: 'Leave' }).click();
    await page.waitForSelector('html[data-status="LEFT"]');

    // A back-end change through the API reaches it too.
    await gql(app, `mutation { rejoinCommunityLayer(userId: "${USER}") { status } }`);
    await page.waitForSelector('html[data-status="ACTIVE"]');
    await gql(app, `mutation { leaveCommunityLayer(userId: "${USER}") { status } }`);
    await page.waitForSelector('html[data-status="LEFT"]');
    await gql(app, `mutation { signal(input: { userId: "${USER}", itemId: "a", kind: LIKE }) { forwarded } }`);
    await page.reload();
    await page.waitForSelector('html[data-live="on"]');
    const rows = await page.locator('#history-rows tr').count();
    expect(rows).toBe((await apiStatus()).history.length);
    expect(await page.locator('#history-rows tr').first().locator('td').nth(2).textContent()).toBe('1');
    await page.screenshot({ path: 'docs/settings.png', fullPage: true });
    await otherDevice.close();
    await page.close();
  });

  it('shows the newest 20 leaves and pages back through older ones, keeping them through live updates', async () => {
    const user = '4343';
    const leftAt: string[] = [];
    for (let i = 0; i < 23; i++) {
      leftAt.push((await gql(app, `mutation { leaveCommunityLayer(userId: "${user}") { leftAtNs } }`)).data!.leaveCommunityLayer.leftAtNs);
      await gql(app, `mutation { rejoinCommunityLayer(userId: "${user}") { status } }`);
    }
    const page = await openSettings(await token(user));
    const shownNs = () =>
      page.locator('#history-rows tr td:first-child time').evaluateAll((times) => times.map((t) => (t as HTMLElement).dataset['ns']));
    await page.waitForSelector('#history-rows tr');
    expect(await shownNs()).toEqual(leftAt.slice(3).reverse());
    await expect(page.locator('#history-count').textContent()).resolves.toBe('Showing the 20 most recent of 23 leaves.');

    await page.getByRole('button', { name: 'Show older leaves' }).click();
    await page.waitForSelector('#older[hidden]', { state: 'attached' });
    expect(await shownNs()).toEqual([...leftAt].reverse());
    expect(await page.locator('#history-count').isVisible()).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('history');

    // A new leave arrives live: it goes on top and the older pages stay.
    const newest = (await gql(app, `mutation { leaveCommunityLayer(userId: "${user}") { leftAtNs } }`)).data!.leaveCommunityLayer.leftAtNs;
    await page.waitForSelector('html[data-status="LEFT"]');
    expect(await shownNs()).toEqual([newest, ...[...leftAt].reverse()]);
    await page.close();
  });

  it('is usable from the keyboard: the dialog opens with Enter and Escape returns focus', async () => {
    await gql(app, `mutation { rejoinCommunityLayer(userId: "${USER}") { status } }`);
    const page = await openSettings(await token(USER));
    await page.waitForSelector('html[data-status="ACTIVE"]');
    await page.locator('#leave').focus();
    await page.keyboard.press('Enter');
    await expect(page.getByRole('dialog').isVisible()).resolves.toBe(true);
    await page.keyboard.press('Escape');
    await expect(page.getByRole('dialog').isVisible()).resolves.toBe(false);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('leave');
    expect((await apiStatus()).status).toBe('ACTIVE');
    await page.close();
  });

  it('says clearly when the token is not accepted, and asks for another', async () => {
    const page = await browser.newPage();
    await page.goto(`${settingsUrl}#token=not-a-token`);
    await page.waitForSelector('#error:not([hidden])');
    await expect(page.locator('#error').textContent()).resolves.toContain('Sign in again');
    await expect(page.locator('#token-form').isVisible()).resolves.toBe(true);
    await page.close();
  });

  it('renews the live stream when the embedding app posts a new token after the old one expired', async () => {
    // An embedding app on its own origin, and an instance that lets it frame the page and post tokens.
    let parentPage = '';
    const embedder = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(parentPage));
    await new Promise<void>((resolve) => embedder.listen(0, '127.0.0.1', resolve));
    const embedderOrigin = `http://127.0.0.1:${(embedder.address() as AddressInfo).port}`;
    const framed = await startApp(databaseUrl, { CORS_ORIGINS: embedderOrigin });
    const page = await browser.newPage();
    try {
      // Short-lived: if the page is slow to open its stream, it may see only the expiry, which is what this test is about.
      const expiring = await token(USER, undefined, '4s');
      parentPage = `<!doctype html><script>window.received = []; addEventListener('message', (event) => received.push(event.data));</script>
        <iframe id="settings" src="${new URL('/settings', framed.url)}#token=${expiring}"></iframe>`;
      await page.goto(`${embedderOrigin}/app`);
      const frame = page.frameLocator('#settings');

      // The server ends the stream when the token expires; the page asks its embedder for a new one.
      await frame.locator('#error:not([hidden])').waitFor();
      await expect(frame.locator('#error').textContent()).resolves.toContain('Sign in again');
      expect(await frame.locator('html').getAttribute('data-live')).toBe('off');
      await page.waitForFunction(() =>
        (window as unknown as { received: { type: string }[] }).received.some((m) => m.type === 'community-layer-token-expired'),
      );

      const fresh = await token(USER, undefined, '10m');
      await page.evaluate((value) => {
        const target = (document.getElementById('settings') as HTMLIFrameElement).contentWindow!;
        target.postMessage({ type: 'community-layer-token', token: value }, '*');
      }, fresh);
      await frame.locator('html[data-live="on"]').waitFor();
      await expect(frame.locator('#error').isHidden()).resolves.toBe(true);

      // Live again: a change made through the API reaches the framed page.
      const next = (await apiStatus()).status === 'LEFT' ? 'rejoinCommunityLayer' : 'leaveCommunityLayer';
      const status = (await gql(framed, `mutation { ${next}(userId: "${USER}") { status } }`)).data![next].status;
      await frame.locator(`html[data-status="${status}"]`).waitFor();
    } finally {
      await page.close();
      await framed.stop();
      embedder.close();
    }
  });
});
