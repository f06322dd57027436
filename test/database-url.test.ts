import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/config.js';
import { parseDatabaseUrl } from '../src/config/database-url.js';
import { capturedLog, freshDatabase, startApp } from './support/harness.js';

describe('database URLs', () => {
  it('takes libpq multi-host URLs: each host in order, target_session_attrs, the password masked for logs', () => {
    const url = 'postgres://app:s3cret@db1.internal:5433,[::1],db3:6432/community?target_session_attrs=read-write&sslmode=disable';
    const config = loadConfig({ DATABASE_URL: url, DATABASE_LISTEN_URL: url });
    expect(config.database.url).toBe(url);
    const target = parseDatabaseUrl(url);
    expect(target.hosts).toEqual([
      { host: 'db1.internal', port: 5433 },
      { host: '[::1]', port: 5432 },
      { host: 'db3', port: 6432 },
    ]);
    expect(target.targetSessionAttrs).toBe('read-write');
    expect(target.urlFor(target.hosts[2]!)).toBe('postgres://app:s3cret@db3:6432/community?sslmode=disable');
    expect(target.masked).toBe(
      'postgres://app:***@db1.internal:5433,[::1],db3:6432/community?target_session_attrs=read-write&sslmode=disable',
    );
  });

  it.each([
    ['postgres://u@h1:5432,:5433/db', /DATABASE_URL: host 2 of 2 is not host\[:port\]/],
    ['postgres://u@h1:70000/db', /DATABASE_URL: host 1 has port 70000, outside 1-65535/],
    ['postgres://u@h1,h2/db?target_session_attrs=standby', /DATABASE_URL: target_session_attrs=standby is not supported/],
    ['mysql://u@h1/db', /DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/],
  ])('refuses %s, saying what is wrong and never echoing a password', (url, message) => {
    expect(() => loadConfig({ DATABASE_URL: url })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL: url })).toThrow(message);
  });
});

describe('durability of acknowledged commits', () => {
  it('says at start (info: no standby streams, so nothing to fail over to) that the primary has no synchronous standby, and refuses to start when DATABASE_REQUIRE_SYNCHRONOUS_COMMIT=true', async () => {
    const databaseUrl = await freshDatabase();
    const { logger, entries } = capturedLog();
    const app = await startApp(databaseUrl, {}, { logger });
    try {
      const body = (await (await fetch(new URL('/readyz', app.url))).json()) as {
        status: string;
        durability: { durable: boolean; reason: string };
      };
      expect(body.status).toBe('ready');
      expect(body.durability).toMatchObject({ durable: false, reason: expect.stringMatching(/synchronous_standby_names is empty/) });
      const told = entries.filter((entry) => /acknowledged commits can be lost on failover/.test(entry.msg));
      expect(told.map((entry) => entry.level)).toEqual([30]);
      expect(body.durability).toMatchObject({ standbys: 0 });
    } finally {
      await app.stop();
    }
    await expect(startApp(databaseUrl, { DATABASE_REQUIRE_SYNCHRONOUS_COMMIT: 'true' })).rejects.toThrow(
      /DATABASE_REQUIRE_SYNCHRONOUS_COMMIT=true, but the primary can lose acknowledged commits on failover: synchronous_standby_names is empty/,
    );
  });
});
