import { expect, it } from 'vitest';
import { decodeMembershipNotification, MEMBERSHIP_CHANNEL } from '../src/membership/membership-notification.js';
import { freshDatabase, sqlClient } from './support/harness.js';

it('the trigger notifies on MEMBERSHIP_CHANNEL with a payload the codec decodes', async () => {
  const databaseUrl = await freshDatabase();
  const listener = await sqlClient(databaseUrl);
  const writer = await sqlClient(databaseUrl);
  try {
    const payloads: string[] = [];
    listener.on('notification', (message) => message.channel === MEMBERSHIP_CHANNEL && payloads.push(message.payload ?? ''));
    await listener.query(`LISTEN ${listener.escapeIdentifier(MEMBERSHIP_CHANNEL)}`);
    const { rows } = await writer.query(`SELECT version FROM leave_community_layer('18446744073709551615')`);
    await writer.query(`SELECT rejoin_community_layer('18446744073709551615')`);
    await writer.query(`DELETE FROM community_membership WHERE user_id = '18446744073709551615'`);
    await expect.poll(() => payloads.length).toBe(3);
    const [left, rejoined, deleted] = payloads.map(decodeMembershipNotification);
    expect(left?.change).toEqual({ version: BigInt(rows[0].version), userId: '18446744073709551615', status: 'LEFT' });
    expect(rejoined?.change).toMatchObject({ userId: '18446744073709551615', status: 'ACTIVE' });
    // A delete leaves no row: it is announced as ACTIVE with a version of its own.
    expect(deleted?.change).toMatchObject({ userId: '18446744073709551615', status: 'ACTIVE' });
    expect(deleted!.change.version).toBeGreaterThan(rejoined!.change.version);
  } finally {
    await Promise.all([listener.end(), writer.end()]);
  }
});

it('refuses payloads that are not version,user_id,status,sent_at_us', () => {
  for (const payload of ['', '1,2,LEFT', '1,2,GONE,3', 'x,2,LEFT,3', '1,2,LEFT,3,4']) {
    expect(decodeMembershipNotification(payload)).toBeNull();
  }
});
