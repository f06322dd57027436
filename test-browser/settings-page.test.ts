import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { freshDatabase, gql, startApp, token } from '../test/support/harness.js';

const USER = '4242';
const STATUS = `{ communityLayerStatus(userId: "${USER}") { status leftAtNs history { leftAtNs rejoinedAtNs } } }`;

let app: App;
let browser: Browser;
let settingsUrl: string;

beforeAll(async () => {
  app = await startApp(await freshDatabase());
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
  });
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
    const shownNs = () => page.locator('#history-rows tr td:first-child time').evaluateAll((times) => times.map((t) => (t as HTMLElement).dataset['ns']));
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
});
