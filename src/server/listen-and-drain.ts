import type http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Node's default of 511 pending connections overflows under a flood of new clients, and the kernel
 * then drops their SYNs: they retry after 1 s, then 3 s, which is what a refusal would cost them.
 * The kernel caps this at net.core.somaxconn.
 */
const LISTEN_BACKLOG = 4096;

/** Listens and answers with the server's origin (`http://host:port`). */
export async function listen(server: http.Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${shownHost}:${address.port}`;
}

/**
 * Stops accepting connections and lets in-flight requests finish: keep-alive connections go as
 * soon as they are idle, busy ones after their request, and whatever remains after `timeoutMs` is cut.
 */
export async function drain(server: http.Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweeper = setInterval(() => server.closeIdleConnections(), 25);
  const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs);
  await closed;
  clearInterval(sweeper);
  clearTimeout(deadline);
}
