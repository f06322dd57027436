import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../src/util/free-port.js';
import { emptyDatabase } from '../tooling/databases.js';
import { sqlClient } from './support/harness.js';

// Every command-line tool that reaches the database fails in one line on stderr (what failed, against
// which host and database, never the password), with a non-zero exit code and no stack unless
// LOG_LEVEL=debug: run from the sources as child processes, as `node scripts/cli.mjs` runs them.

const TOOLS: [tool: string, args: string[]][] = [
  ['migrate', []],
  ['webhooks', ['list']],
  ['processors', ['list']],
  ['documents-register', ['trusted-documents.json']],
];
const PASSWORD = `never-shown-${randomBytes(4).toString('hex')}`;
const ROLE = `weak_${randomBytes(4).toString('hex')}`;

let admin: pg.Client;
let adminUrl: URL;
const urls: Record<string, string> = {};

beforeAll(async () => {
  adminUrl = new URL(inject('adminDatabaseUrl'));
  admin = await sqlClient(adminUrl.toString());
  const closedPort = await freePort();
  const at = (change: (url: URL) => void) => {
    const url = new URL(adminUrl);
    change(url);
    return url.toString();
  };
  urls['closed port'] = at((url) => {
    url.password = PASSWORD;
    url.port = String(closedPort);
  });
  urls['wrong password'] = at((url) => {
    url.password = PASSWORD;
  });
  urls['missing role'] = at((url) => {
    url.username = `no_such_role_${randomBytes(3).toString('hex')}`;
    url.password = PASSWORD;
  });
  urls['unknown database'] = at((url) => {
    url.pathname = '/no_such_database';
  });
  urls['DNS failure'] = at((url) => {
    url.hostname = 'no-such-host.invalid';
    url.password = PASSWORD;
  });
  // A role that may log in and nothing else: migrations on a new database need CREATE on its schema.
  await admin.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`);
  const empty = new URL(await emptyDatabase(adminUrl.toString()));
  empty.username = ROLE;
  empty.password = PASSWORD;
  urls['permission denied'] = empty.toString();
});

afterAll(async () => {
  await admin?.query(`DROP OWNED BY ${ROLE}`).catch(() => undefined);
  await admin?.query(`DROP ROLE IF EXISTS ${ROLE}`);
  await admin?.end();
});

interface Outcome {
  code: number | null;
  stderr: string;
}

function runTool(tool: string, args: string[], databaseUrl: string, logLevel = 'warn'): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', `src/cli/${tool}.ts`, ...args],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test', LOG_LEVEL: logLevel, DATABASE_URL: databaseUrl } },
      (error, _stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stderr }),
    );
  });
}

/** One line naming the tool, the failure and where; non-zero exit; no password, no stack frame. */
function expectOneLine({ code, stderr }: Outcome, tool: string, why: RegExp, where: string): void {
  expect(code).not.toBe(0);
  const lines = stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^${tool.replace('-', '[-:]')}: `));
  expect(lines[0]).toMatch(why);
  expect(lines[0]).toContain(where);
  expect(stderr).not.toContain(PASSWORD);
  expect(stderr).not.toContain('    at ');
}

const where = (url: string) => {
  const { hostname, port, pathname } = new URL(url);
  return `${hostname}:${port}${pathname}`;
};

describe.each(TOOLS)('%s', (tool, args) => {
  it.each([
    ['closed port', /cannot connect to .*: connection refused/],
    ['wrong password', /cannot connect to .*: password authentication failed for user "\w+" \(a wrong password, or no such role\)$/],
    // The server does not tell a missing role from a wrong password.
    [
      'missing role',
      /cannot connect to .*: password authentication failed for user "no_such_role_\w+" \(a wrong password, or no such role\)$/,
    ],
  ])(
    '%s: one line',
    async (failure, why) => {
      expectOneLine(await runTool(tool, args, urls[failure]!), tool, why, where(urls[failure]!));
    },
    60_000,
  );
});

it.each([
  ['unknown database', /cannot connect to .*: database "no_such_database" does not exist/],
  ['DNS failure', /cannot connect to .*: host name (not found|lookup failed) \(DNS\)/],
  ['permission denied', /failed on .*: permission denied for schema public \(SQLSTATE 42501\)/],
])(
  'migrate, %s: one line',
  async (failure, why) => {
    expectOneLine(await runTool('migrate', [], urls[failure]!), 'migrate', why, where(urls[failure]!));
  },
  60_000,
);

it('LOG_LEVEL=debug adds the stack after the line', async () => {
  const { code, stderr } = await runTool('webhooks', ['list'], urls['wrong password']!, 'debug');
  expect(code).not.toBe(0);
  expect(stderr.split('\n')[0]).toMatch(/^webhooks: cannot connect to .*: password authentication failed/);
  expect(stderr).toContain('    at ');
  expect(stderr).not.toContain(PASSWORD);
}, 60_000);
