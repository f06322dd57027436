import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../tooling/postgres/embedded.js';
import { isRunning, newcomerEnvironment, processInfo, rootOnlyCheckout } from './support/checkout.js';
import { Command } from '../tooling/command.js';
import { TEST_SECRET, eventually, token } from './support/harness.js';
import { spawnServerProcess, type ServerProcess } from '../tooling/server-process.js';

const SIGNAL = `mutation Send($input: SignalInput!) { signal(input: $input) { signalId forwarded } }`;
const AS_ROOT = process.getuid?.() === 0;

async function graphql(url: string, query: string, variables: Record<string, unknown>, bearer: string): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query, variables }),
  });
  return response.json();
}

/**
 * `npm start` as a newcomer types it (development, no DATABASE_URL, in the checkout), except that
 * its `prestart` build already ran once for the whole file.
 */
function npmStart(app: string, extra: Record<string, string> = {}): Promise<ServerProcess> {
  const env = newcomerEnvironment({ NODE_ENV: 'development', AUTH_JWT_SECRET: TEST_SECRET, ...extra });
  return spawnServerProcess({
    command: { file: 'npm', args: ['start', '--ignore-scripts'], cwd: app, env },
    detached: true,
    environment: {},
  });
}

/** Embedded PostgreSQL's first start (initdb) on a loaded machine may take a while. */
const START_MS = 120_000;

async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

/** After a failed test: nothing of the server may outlive it, PostgreSQL included (its own group). */
async function kill(server: Command, dataDir: string): Promise<void> {
  if (server.child.exitCode === null && server.child.signalCode === null) process.kill(-server.child.pid!, 'SIGKILL');
  const postmaster = await postmasterPid(dataDir).catch(() => null);
  if (postmaster && isRunning(postmaster)) process.kill(postmaster, 'SIGQUIT');
}

describe('the README commands, from a checkout in a root-only folder', () => {
  let folder: string;
  let app: string;
  let dataDir: string;

  beforeAll(async () => {
    ({ folder, app } = await rootOnlyCheckout());
    dataDir = path.join(app, '.data', 'postgres');
    const build = new Command('npm', ['run', 'build'], { cwd: app, env: newcomerEnvironment({}) });
    if ((await build.exit) !== 0) throw new Error(`npm run build failed:\n${build.text}`);
  }, 300_000);

  afterAll(async () => {
    // As root the cluster lives outside the checkout (linked from .data/postgres).
    const cluster = await realpath(dataDir).catch(() => null);
    if (cluster && !cluster.startsWith(folder)) await rm(cluster, { recursive: true, force: true });
    await rm(folder, { recursive: true, force: true });
  });

  it('npm start serves GraphQL; a second start fails in one paragraph; Ctrl-C drains, a second Ctrl-C stops at once', async () => {
    // A long grace period keeps the first Ctrl-C's drain going until the second one.
    const server = await npmStart(app, { SHUTDOWN_GRACE_MS: '600000' });
    try {
      await server.ready(START_MS);
      const url = server.url;
      const [, databaseUrl] = await server.waitFor(/DATABASE_URL=(postgres:\/\/\S+)/);
      const status = await graphql(url!, `{ communityLayerStatus(userId: "42") { status } }`, {}, await token('42'));
      expect(status).toMatchObject({ data: { communityLayerStatus: { status: 'ACTIVE' } } });
      expect(status.errors).toBeUndefined();

      // The printed URL carries the cluster's own random password, kept in its data folder.
      const password = (await readFile(path.join(dataDir, 'community-layer.password'), 'utf8')).trim();
      expect(new URL(databaseUrl!).password).toBe(password);
      expect(password).toMatch(/^[\w-]{32}$/);

      const postmaster = await postmasterPid(dataDir);
      const postgres = await processInfo(postmaster);
      expect(postgres.pgrp).not.toBe(server.child.pid);
      if (AS_ROOT) {
        const { stdout } = await promisify(execFile)('id', ['-u', 'postgres']);
        expect(postgres.uid).toBe(Number(stdout));
        // Neither binaries nor data can be under the root-only folder: "postgres" cannot enter it.
        expect(postgres.exe.startsWith(folder)).toBe(false);
        expect((await realpath(dataDir)).startsWith(folder)).toBe(false);
      } else {
        expect(postgres.exe.startsWith(path.join(app, 'node_modules'))).toBe(true);
      }

      // A second start on the same data folder fails: one paragraph on stderr, exit code 1.
      const second = new Command(process.execPath, ['dist/src/main.js'], {
        cwd: app,
        env: newcomerEnvironment({ PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'warn' }),
      });
      expect(await second.exit).toBe(1);
      const report = second.text.trim();
      expect(report).toMatch(
        /^Embedded PostgreSQL: PostgreSQL did not start on the data folder .*postmaster\.pid.*Another PostgreSQL is probably running/,
      );
      expect(report).not.toContain('\n');

      server.interrupt();
      await server.waitFor(/press Ctrl-C again to stop at once/);
      // PostgreSQL did not get the Ctrl-C: the draining server still stores signals.
      const sent = await graphql(url!, SIGNAL, { input: { userId: '7', itemId: 'after-ctrl-c', kind: 'LIKE' } }, await token('7'));
      expect(sent.data.signal.forwarded).toBe(true);

      server.interrupt();
      // The server exits 130; npm then ends itself with the SIGINT, as shells expect.
      expect([130, 'SIGINT']).toContain(await server.exit);
      expect(server.text).toContain('stopping at once');
      expect(isRunning(postmaster)).toBe(false);
      expect(existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);
    } finally {
      await kill(server, dataDir);
    }
  }, 180_000);

  it('Ctrl-C during a stream of signals, delivered twice as npm forwards it: drains, stores every acknowledged signal, then stops the database', async () => {
    // bash runs the script by exec, so npm's forwarded SIGINT reaches the server on top of the terminal's.
    const server = await npmStart(app, { npm_config_script_shell: '/bin/bash' });
    try {
      await drainsOnCtrlC(server);
    } finally {
      await kill(server, dataDir);
    }
  }, 180_000);

  async function drainsOnCtrlC(server: ServerProcess): Promise<void> {
    await server.ready(START_MS);
    const url = server.url;
    const bearer = await token('1', 'signals:write');
    const acknowledged: string[] = [];
    let refused = 0;
    const stream = async (client: number) => {
      for (let i = 0; ; i++) {
        try {
          const body = await graphql(url!, SIGNAL, { input: { userId: String(client), itemId: `s-${i}`, kind: 'VIEW' } }, bearer);
          if (body.data?.signal) acknowledged.push(body.data.signal.signalId);
        } catch {
          refused++;
          return;
        }
      }
    };
    const clients = Array.from({ length: 16 }, (_, client) => stream(client));
    await eventually(() => acknowledged.length >= 200, 60_000);
    server.interrupt();
    expect(await server.exit).toBe(0);
    await Promise.all(clients);
    expect(refused).toBe(16);
    expect(server.text).not.toContain('stopping at once');
    expect(existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);

    // The same data folder opens again with the password kept there, and holds every acknowledged signal.
    const database = await startEmbeddedPostgres({ dataDir, database: 'community_layer', persistent: true, log: () => undefined });
    try {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const { rows } = await client.query('SELECT count(*)::int AS n FROM signal WHERE id = ANY($1::bigint[])', [acknowledged]);
        expect(rows[0].n).toBe(acknowledged.length);
      } finally {
        await client.end();
      }
    } finally {
      await database.stop();
    }
  }

  it('refuses NODE_ENV=production without DATABASE_URL, naming the variable', async () => {
    const command = new Command(process.execPath, ['dist/src/main.js'], {
      cwd: app,
      env: newcomerEnvironment({ NODE_ENV: 'production', AUTH_JWT_SECRET: TEST_SECRET }),
    });
    expect(await command.exit).toBe(2);
    expect(command.text).toMatch(/DATABASE_URL: required in production/);
    expect(existsSync(path.join(app, '.data', 'postgres', 'postmaster.pid'))).toBe(false);
  });
});
