import pg from 'pg';

/**
 * The NOTIFY ceiling's receiver: a process with one LISTEN connection and nothing else, forked
 * once per server process of the propagation case. Each payload is `tick,sent_us` (the database
 * clock at the write); it reports the lag to its own clock at the 'notification' event over IPC,
 * as bench/server-process.ts reports a cache apply.
 */
const [url, channel] = process.argv.slice(2) as [string, string];
const client = new pg.Client({ connectionString: url });
client.on('notification', (message) => {
  const receivedAtUs = (performance.timeOrigin + performance.now()) * 1000;
  const [tick, sentUs] = (message.payload ?? '').split(',');
  process.send!({ tick, lagUs: receivedAtUs - Number(sentUs) });
});
await client.connect();
await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
process.send!({ listening: true });
process.on('disconnect', () => void client.end().finally(() => process.exit(0)));
