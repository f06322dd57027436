import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { freshDatabase, startApp } from './support/harness.js';

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

describe('the build a server runs', () => {
  let app: App | undefined;
  afterAll(() => app?.stop());

  it("is named by package.json's version and the commit, in /readyz and in community_layer_build_info", async () => {
    const commit = (await promisify(execFile)('git', ['describe', '--always', '--dirty', '--abbrev=40'])).stdout.trim();
    app = await startApp(await freshDatabase());
    const ready = (await (await fetch(new URL('/readyz', app.url))).json()) as { build: unknown };
    expect(ready.build).toEqual({ version: VERSION, commit });
    const scraped = await (await fetch(app.metricsUrl)).text();
    expect(scraped).toContain(`community_layer_build_info{version="${VERSION}",commit="${commit}"} 1\n`);
  });
});
