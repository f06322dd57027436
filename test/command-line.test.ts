import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { TEST_SECRET } from './support/harness.js';

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const COMMIT = (await promisify(execFile)('git', ['describe', '--always', '--dirty', '--abbrev=40'])).stdout.trim();
const TOOLS = [
  'main.ts',
  ...[
    'token',
    'migrate',
    'webhooks',
    'processors',
    'memberships',
    'kube-secrets',
    'healthcheck',
    'documents-register',
    'print-schema',
    'settings-doc',
    'documents',
    'db-schema',
  ].map((tool) => `cli/${tool}.ts`),
];

/** A command as an operator runs it, from the sources (tsx), with only the environment given. */
async function run(
  file: string,
  args: string[],
  environment: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', `src/${file}`, ...args], {
      env: { PATH: process.env['PATH'], ...environment },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the command line of the server and every tool', () => {
  it.each(TOOLS)('%s: --version names the version and commit, --help the usage, and neither starts anything', async (tool) => {
    // No configuration at all: neither reads it.
    const version = await run(tool, ['--version'], { NODE_ENV: 'production' });
    expect(version).toMatchObject({ code: 0, stdout: `community-layer ${VERSION} (commit ${COMMIT})\n` });
    const help = await run(tool, ['--help'], { NODE_ENV: 'production' });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: /);
  });

  // One child process per test: each compiles the server with tsx, which on a loaded machine takes a while.
  it('--check-config validates the whole configuration and exits: OK', async () => {
    const valid = await run('main.ts', ['--check-config'], {
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: TEST_SECRET,
      DATABASE_URL: 'postgres://u@127.0.0.1:1/none',
    });
    expect(valid).toMatchObject({ code: 0, stdout: 'configuration OK (NODE_ENV=production)\n' });
  });

  it('--check-config names every problem as a one-liner and exits 2', async () => {
    const invalid = await run('main.ts', ['--check-config'], { NODE_ENV: 'production', AUTH_JWT_SECRET: 'short' });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toBe(
      'Invalid configuration:\n  AUTH_JWT_SECRET: must be at least 32 bytes\n' +
        '  DATABASE_URL: required in production (without it the service would start an embedded development database)\n',
    );
  });

  it('an unknown argument is refused with the usage', async () => {
    expect(await run('main.ts', ['--port', '4000'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^unknown argument: --port\n\nusage: /),
    });
  });

  it('a variable that looks like a setting but is none is warned about, naming the setting it resembles', async () => {
    const checked = await run('main.ts', ['--check-config'], {
      PORTT: '4001',
      WEBHOOK_TIMEOUT: '3000',
      HOST: 'box',
      NODE_OPTIONS: '',
      OTEL_RESOURCE_ATTRIBUTES: 'a=b',
    });
    expect(checked.code).toBe(0);
    expect(checked.stderr.split('\n').filter(Boolean)).toEqual([
      'warning: PORTT is not a setting (did you mean PORT?); it is ignored. The settings: docs/settings.md',
      'warning: WEBHOOK_TIMEOUT is not a setting (did you mean WEBHOOK_TIMEOUT_MS?); it is ignored. The settings: docs/settings.md',
    ]);
  });

  it('in production a short secret is the one-liner, and minting a token asks for no database', async () => {
    const short = await run('cli/token.ts', ['--sub', '7'], { NODE_ENV: 'production', AUTH_JWT_SECRET: 'short' });
    expect(short).toMatchObject({ code: 2, stderr: 'Invalid configuration:\n  AUTH_JWT_SECRET: must be at least 32 bytes\n' });
    const minted = await run('cli/token.ts', ['--sub', '7'], { NODE_ENV: 'production', AUTH_JWT_SECRET: TEST_SECRET });
    expect(minted.code).toBe(0);
    expect(minted.stdout).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/);
  });
});
