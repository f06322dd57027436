import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { viewerFromClaims } from '../src/auth/claims.js';
import { TEST_SECRET } from './support/harness.js';

/** The token tool as `npm run token` runs it, from the sources here (tsx) with a configured secret. */
async function token(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/token.ts', ...args], {
      env: { PATH: process.env['PATH'], AUTH_JWT_SECRET: TEST_SECRET, NODE_ENV: 'test' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the token tool', () => {
  it('--help prints the usage; a wrong option says what is wrong, without a stack trace', async () => {
    const help = await token('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run token -- \(--sub <UInt64 user id> \| --service <client id>\)/);
    const wrong = await token('--user', '7');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^Unknown option '--user'/);
    expect(wrong.stderr).not.toMatch(/\n\s+at /);
  });

  it('--service mints a service caller: no user id, only its scopes', async () => {
    const minted = await token('--service', 'billing-backend', '--scope', 'signals:write');
    expect(minted.code).toBe(0);
    const { payload } = await jwtVerify(minted.stdout.trim(), Buffer.from(TEST_SECRET));
    expect(payload.sub).toBe('billing-backend');
    const viewer = viewerFromClaims(payload, { userIdClaim: 'sub', scopesClaim: undefined });
    expect(viewer.userId).toBeNull();
    expect([...viewer.scopes]).toEqual(['signals:write']);
  });

  it('refuses a service named like a user id, and a service token without scopes', async () => {
    expect(await token('--service', '42', '--scope', 'signals:write')).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^--service must name a client/),
    });
    expect(await token('--service', 'billing-backend')).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^a service token needs --scope/),
    });
  });
});
