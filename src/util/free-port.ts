import { readFile } from 'node:fs/promises';
import net from 'node:net';

/** Where ports are drawn from when the kernel's own range is unknown (Linux's default starts at 32768). */
const LOWEST = 10_000;
const DEFAULT_EPHEMERAL_START = 32_768;
const TRIES = 50;

/**
 * A loopback port that was free a moment ago (the caller retries if it is taken before use), drawn
 * below the kernel's ephemeral range. A port the kernel handed out (`listen(0)`) is back in that
 * range once closed, so until the caller binds it, any other `listen(0)` may be given it: another
 * server on this host would then answer in the caller's place (a test's server process, polled for
 * readiness, was another test's app). Below the range only another caller of this can take it.
 */
export async function freePort(): Promise<number> {
  const below = await ephemeralStart();
  for (let i = 0; i < TRIES; i++) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    if (await listensOn(port)) return port;
  }
  throw new Error(`no free loopback port between ${LOWEST} and ${below - 1} after ${TRIES} tries`);
}

/** Whether the port could be bound on loopback just now (and was released again). */
function listensOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** The first port of the kernel's ephemeral range (Linux), or its default elsewhere. */
async function ephemeralStart(): Promise<number> {
  const range = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '');
  const start = Number(range.trim().split(/\s+/)[0]);
  return Number.isInteger(start) && start > LOWEST + 1_000 ? start : DEFAULT_EPHEMERAL_START;
}
