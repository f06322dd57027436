import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, gql, sqlClient, startApp, token } from '../test/support/harness.js';
import { lockCohortEntry } from '../test/support/cohort-entry-lock.js';
import { launchChromium } from './support/chromium.js';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe('removing past contributions from the settings page', () => {
  it('is offered only while LEFT, says what it removes and keeps, shows progress and the receipt, and refuses a rejoin meanwhile', async () => {
    const user = '4545';
    // An instance of its own on its own database: chunks of 3 signals with a pause, so the purge is seen running.
    const databaseUrl = await freshDatabase();
    const slow = await startApp(databaseUrl, { PURGE_CHUNK_SIZE: '3', PURGE_CHUNK_PAUSE_MS: '3000' });
    const page = await browser.newPage({ viewport: { width: 900, height: 1100 } });
    const stall = await sqlClient(databaseUrl);
    try {
      const inputs = Array.from({ length: 6 }, (_, i) => ({
        userId: user,
        itemId: `p-${i % 2}`,
        kind: 'LIKE',
        context: { cohortIds: ['berlin'] },
      }));
      await gql(slow, `mutation ($inputs: [SignalInput!]!) { signals(inputs: $inputs) { forwarded } }`, { inputs });
      // The second chunk waits on a row of it until the refused rejoin is seen, however slow the browser.
      await lockCohortEntry(stall, user, 3);
      await page.goto(`${new URL('/settings', slow.url)}#token=${await token(user)}`);
      await page.waitForSelector('html[data-live="on"]');
      await page.waitForSelector('html[data-status="ACTIVE"]');
      expect(await page.locator('#purge').isVisible()).toBe(false);

      await page.getByRole('button', { name: 'Leave the community layer' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Leave' }).click();
      await page.waitForSelector('html[data-status="LEFT"]');
      await page.getByRole('button', { name: 'Remove my past contributions' }).click();
      const dialog = page.getByRole('dialog', { name: 'Remove your past contributions?' });
      const text = await dialog.textContent();
      expect(text).toContain('removes every contribution your activity made to shared and cohort recommendations before you left');
      expect(text).toContain('does not delete your own activity');
      expect(text).toContain('cannot rejoin');
      await dialog.getByRole('button', { name: 'Remove' }).click();

      await page.waitForSelector('html[data-purge="RUNNING"]');
      await expect(page.locator('#purge-state').textContent()).resolves.toMatch(/removed so far/);
      await page.getByRole('button', { name: 'Rejoin the community layer' }).click();
      await page.waitForSelector('#error:not([hidden])');
      await expect(page.locator('#error').textContent()).resolves.toContain('still being removed');
      await stall.query('ROLLBACK');

      await page.waitForSelector('html[data-purge="FINISHED"]', { timeout: 30_000 });
      const receipt = (await gql(slow, `{ communityPurges(userId: "${user}") { removedSoFar } }`)).data!.communityPurges[0];
      expect(receipt.removedSoFar).toBe(12);
      await expect(page.locator('#purge-state').textContent()).resolves.toContain('12 entries');
      const cells = await page
        .locator('#purge-target-rows tr')
        .evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => cell.textContent)));
      // LIKE weighs 5: six signals, 30 per aggregate.
      expect(cells).toEqual([
        ['Everyone', '6', '30'],
        ['Cohort berlin', '6', '30'],
      ]);
      expect(await page.locator('#purge-start').isVisible()).toBe(false);

      await page.getByRole('button', { name: 'Rejoin the community layer' }).click();
      await page.waitForSelector('html[data-status="ACTIVE"]');
      expect(await page.locator('#purge').isVisible()).toBe(false);
    } finally {
      await stall.end();
      await page.close();
      await slow.stop();
    }
  });
});
