import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IdFileError, idsOfFile } from '../src/cli/id-file.js';
import { MAX_BULK_MEMBERSHIP_CHANGES } from '../src/membership/memberships.js';
import { freshDatabase, gql, sqlClient, startApp } from './support/harness.js';

/** `npm run memberships` from the sources (tsx), as command-line.test.ts runs the tools: one child process. */
function runMemberships(args: string[], databaseUrl: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/memberships.ts', ...args],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: databaseUrl } },
      (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

describe('the file of ids', () => {
  it('is read one id a line, skipping blank lines and # comments, in file order', () => {
    expect(idsOfFile('ids.txt', '# from ticket 123\n42\n\n  7  # trailing note\r\n18446744073709551615\n')).toEqual([
      '42',
      '7',
      '18446744073709551615',
    ]);
  });

  it('is refused whole, naming every malformed or repeated line', () => {
    const refusal = () => idsOfFile('ids.txt', '42\nabc\n-1\n7\n42\n18446744073709551616\n');
    expect(refusal).toThrow(IdFileError);
    expect(refusal).toThrow(
      'ids.txt: nothing written, 4 bad line(s):\n' +
        '  line 2: "abc" must be a decimal integer string of ASCII digits (no sign, spaces, fraction, exponent or hex)\n' +
        '  line 3: "-1" must be a decimal integer string of ASCII digits (no sign, spaces, fraction, exponent or hex)\n' +
        '  line 5: 42 repeats line 1\n' +
        '  line 6: "18446744073709551616" must be at most 18446744073709551615',
    );
    expect(() => idsOfFile('ids.txt', '# nothing but a comment\n\n')).toThrow('ids.txt: no user ids in it, nothing written');
  });
});

describe('npm run memberships', () => {
  it('rejoins from a file as rejoinCommunityLayerMany: a line per user in file order, a summary, exit 1 for a refusal', async () => {
    const databaseUrl = await freshDatabase();
    const db = await sqlClient(databaseUrl);
    try {
      // 501 and 502 are LEFT, 502's contribution being purged (no server runs the purge); 503 never left.
      await db.query(`INSERT INTO signal (id, user_id, item_id, kind, weight_micros, cohort_ids, at_ns, forwarded)
                      VALUES (nextval('signal_id_seq'), 502, 'item-1', 'VIEW', 1000000, '{}', now_ns(), true)`);
      await db.query(`SELECT leave_community_layer(u::u64) FROM unnest('{501,502}'::text[]) AS u`);
      await db.query(`SELECT request_community_purge(502)`);
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'memberships-')), 'ids.txt');
      await writeFile(file, '# ticket 4711\n503\n501\n\n502 # purge running\n');

      const run = await runMemberships(
        ['rejoin', '--file', file, '--reason-text', 'ticket 4711', '--policy-version', '2026-11'],
        databaseUrl,
      );
      expect(run.stdout).toBe('503 UNCHANGED\n501 CHANGED\n502 REFUSED PURGE_IN_PROGRESS\n');
      expect(run.stderr).toBe('rejoin: 3 users, 1 changed, 1 unchanged, 1 refused\n');
      expect(run.code).toBe(1);

      const { rows } = await db.query(
        `SELECT e.user_id::text, e.rejoined_at_ns IS NOT NULL AS rejoined, e.rejoined_reason, e.rejoined_reason_text, e.rejoined_policy_version,
                (SELECT m.status FROM community_membership m WHERE m.user_id = e.user_id) AS status
           FROM leave_episode e ORDER BY e.user_id`,
      );
      expect(rows).toEqual([
        {
          user_id: '501',
          rejoined: true,
          rejoined_reason: 'ADMIN',
          rejoined_reason_text: 'ticket 4711',
          rejoined_policy_version: '2026-11',
          status: 'ACTIVE',
        },
        {
          user_id: '502',
          rejoined: false,
          rejoined_reason: null,
          rejoined_reason_text: null,
          rejoined_policy_version: null,
          status: 'LEFT',
        },
      ]);
      const events = await db.query(`SELECT user_id::text, kind, reason FROM membership_event WHERE kind = 'REJOINED'`);
      expect(events.rows).toEqual([{ user_id: '501', kind: 'REJOINED', reason: 'ADMIN' }]);
    } finally {
      await db.end();
    }
  }, 120_000);

  it('leaves from a file in calls of at most 5,000, and a running server forwards none of their signals once it returns', async () => {
    const databaseUrl = await freshDatabase();
    const app = await startApp(databaseUrl);
    const db = await sqlClient(databaseUrl);
    const forwarded = async (userId: string): Promise<unknown> =>
      (await gql(app, `mutation { signal(input: { userId: "${userId}", itemId: "item-1", kind: VIEW }) { forwarded } }`)).data?.signal
        ?.forwarded;
    try {
      // One more user than a call takes, so the tool makes two calls; the second user left already.
      const ids = Array.from({ length: MAX_BULK_MEMBERSHIP_CHANGES + 1 }, (_, i) => String(700_000 + i));
      const [first, alreadyLeft] = ids as [string, string];
      const last = ids[ids.length - 1] as string;
      // The server's gate has seen the first and the last user ACTIVE.
      expect([await forwarded(first), await forwarded(last)]).toEqual([true, true]);
      await db.query(`SELECT leave_community_layer($1::u64)`, [alreadyLeft]);
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'memberships-')), 'ids.txt');
      await writeFile(file, `# consent platform export\n${ids.join('\n')}\n`);

      const run = await runMemberships(
        ['leave', '--file', file, '--reason', 'CONSENT_PLATFORM', '--policy-version', '2026-12'],
        databaseUrl,
      );
      expect(run.stdout).toBe(ids.map((userId) => `${userId} ${userId === alreadyLeft ? 'UNCHANGED' : 'CHANGED'}\n`).join(''));
      expect(run.stderr).toBe(`leave: ${ids.length} users, ${ids.length - 1} changed, 1 unchanged, 0 refused\n`);
      expect(run.code).toBe(0);

      expect([await forwarded(first), await forwarded(last)]).toEqual([false, false]);
      const { rows } = await db.query(
        `SELECT (SELECT count(*) FROM community_membership WHERE status = 'LEFT')::int AS left_users,
                (SELECT count(*) FROM leave_episode WHERE left_reason = 'CONSENT_PLATFORM' AND left_policy_version = '2026-12')::int AS by_platform,
                (SELECT count(*) FROM membership_event WHERE kind = 'LEFT')::int AS left_events,
                (SELECT count(*) FROM signal WHERE forwarded AND user_id IN ($1::u64, $2::u64))::int AS contributions`,
        [first, last],
      );
      // Each user's first signal contributed while ACTIVE; the ones after the leave did not.
      expect(rows).toEqual([{ left_users: ids.length, by_platform: ids.length - 1, left_events: ids.length, contributions: 2 }]);
    } finally {
      await db.end();
      await app.stop();
    }
  }, 120_000);
});
