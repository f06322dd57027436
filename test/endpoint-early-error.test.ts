import net from 'node:net';
import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { connectDatabase } from '../src/db/database.js';

/** One backend message: its type byte, its length, its body. */
function message(type: string, body: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length + 4);
  return Buffer.concat([Buffer.from(type), length, body]);
}

const fields = (entries: [string, string][]) =>
  Buffer.concat([...entries.map(([code, value]) => Buffer.from(`${code}${value}\0`)), Buffer.from('\0')]);

/** A server that accepts the login, says it is ready, and at once terminates the session, all in one write: a PostgreSQL shutting down as a connection completes. */
function shuttingDownServer(): Promise<net.Server> {
  const server = net.createServer((socket) => {
    socket.once('data', () => {
      socket.end(
        Buffer.concat([
          message('R', Buffer.from([0, 0, 0, 0])),
          message('Z', Buffer.from('I')),
          message(
            'E',
            fields([
              ['S', 'FATAL'],
              ['C', '57P01'],
              ['M', 'terminating connection due to administrator command'],
            ]),
          ),
        ]),
      );
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let server: net.Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

it('a session terminated in the same read that completes its login fails the query, not the process', async () => {
  server = await shuttingDownServer();
  const { port } = server.address() as net.AddressInfo;
  const database = connectDatabase({ url: `postgres://u:p@127.0.0.1:${port}/db`, poolMax: 1, logger: pino({ level: 'silent' }) });
  try {
    // Unhandled, the 'error' pg emits between ReadyForQuery and pg-pool's listener would be an uncaught exception here.
    await expect(database.pool.query('SELECT 1')).rejects.toThrow();
  } finally {
    await database.close();
  }
});
