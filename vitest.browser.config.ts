import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/** `npm run test:browser`: the settings page in Debian's Chromium, driven by playwright-core. */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test-browser/**/*.test.ts'],
    globalSetup: ['test-browser/support/require-chromium.ts', ...((base.test?.globalSetup as string[] | undefined) ?? [])],
  },
});
