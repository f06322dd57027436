import { existsSync } from 'node:fs';

/** Where the browser tests find Debian's Chromium (playwright-core downloads no browser). */
const CHROMIUM = '/usr/bin/chromium';

/**
 * `npm run test:browser`'s first global setup: without Chromium the run ends at once with one
 * paragraph saying how to install it, instead of a launch error in every test file.
 */
export function setup(): void {
  if (existsSync(CHROMIUM)) return;
  process.stderr.write(
    `\nMissing test prerequisite: Chromium is not installed (looked for ${CHROMIUM}). npm run test:browser drives it ` +
      'to test the settings page and GraphiQL. Install it with `sudo apt-get install chromium` (Debian/Ubuntu; .ci/run ' +
      'does this when it is missing), then run npm run test:browser again.\n\n',
  );
  process.exit(1);
}
