import net from 'node:net';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { HostileOptions, HostileSample } from './hostile.js';

// Runs in a child process (see hostile.ts): the attack must not share the server's event loop.
const sample: HostileSample = {
  trickleConnections: 0,
  tricklesEnded: 0,
  tricklesRefused: 0,
  floodSent: 0,
  floodOverloaded: 0,
  floodAdmitted: 0,
  floodOther: 0,
  firstOther: null,
};
/**
 * The attacker is another host: its own loopback address (127.0.0.0/8 is all loopback), so the
 * per-address caps tell it from the legitimate clients on 127.0.0.1, as they would on a network.
 */
const ATTACKER_ADDRESS = '127.0.0.2';

/** graphql-ws's WebSocket, bound to the attacker's address. */
class AttackerWebSocket extends WebSocket {
  constructor(address: string | URL, protocols?: string | string[]) {
    super(address, protocols, { localAddress: ATTACKER_ADDRESS });
  }
}

let stopped = false;
const clients: Client[] = [];
const sockets = new Set<net.Socket>();

/**
 * A POST that announces a large body and sends it a byte a second, again as soon as the server cuts
 * it; refused at once (503: its address or token holds its share of places), it comes back after
 * the same second. Reconnecting at once instead made 32 trickles a flood of thousands of requests a
 * second from one address, another attack (case 7's; a connection rate limit in front is its answer).
 */
function trickle(options: HostileOptions): void {
  if (stopped) return;
  const url = new URL(options.url);
  const socket = net.connect({ port: Number(url.port), host: url.hostname, localAddress: ATTACKER_ADDRESS });
  sockets.add(socket);
  sample.trickleConnections++;
  let timer: NodeJS.Timeout | undefined;
  let refused = false;
  socket.once('connect', () => {
    socket.write(
      `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
        `Authorization: Bearer ${options.token}\r\nContent-Length: ${options.trickleContentLength}\r\n\r\n`,
    );
    timer = setInterval(() => socket.write(' '), 1000);
  });
  socket.on('data', (data: Buffer) => {
    refused ||= data.toString('latin1').startsWith('HTTP/1.1 503');
    socket.destroy();
  });
  socket.once('error', () => socket.destroy());
  socket.once('close', () => {
    clearInterval(timer);
    sockets.delete(socket);
    if (stopped) return;
    sample.tricklesEnded++;
    if (refused) sample.tricklesRefused++;
    setTimeout(() => trickle(options), refused ? 1000 : 0);
  });
}

async function flood(client: Client, options: HostileOptions): Promise<void> {
  while (!stopped) {
    sample.floodSent++;
    const code = await new Promise<string>((resolve) => {
      let answer = 'ok';
      client.subscribe(options.floodBody, {
        next: (result) => void (answer = result.errors ? String(result.errors[0]?.extensions?.['code']) : 'ok'),
        error: (error) => resolve(Array.isArray(error) ? String(error[0]?.extensions?.['code']) : String(error)),
        complete: () => resolve(answer),
      });
    });
    if (code === 'ok') sample.floodAdmitted++;
    else if (code === 'OVERLOADED') sample.floodOverloaded++;
    else {
      sample.floodOther++;
      sample.firstOther ??= code;
    }
  }
}

const running: Promise<void>[] = [];
process.on('message', (message: { start?: HostileOptions; stop?: true }) => {
  const options = message.start;
  if (options) {
    for (let i = 0; i < options.trickles; i++) trickle(options);
    for (let i = 0; i < options.floodSockets; i++) {
      const client = createClient({
        url: options.url.replace(/^http/, 'ws'),
        webSocketImpl: AttackerWebSocket,
        connectionParams: { authorization: `Bearer ${options.token}` },
        retryAttempts: 0,
      });
      clients.push(client);
      for (let k = 0; k < options.floodInFlight; k++) running.push(flood(client, options));
    }
  }
  if (message.stop) {
    stopped = true;
    for (const socket of sockets) socket.destroy();
    void Promise.race([Promise.all(running), new Promise((resolve) => setTimeout(resolve, 10_000))]).then(async () => {
      await Promise.all(clients.map((client) => client.dispose()));
      process.send!(sample, () => process.disconnect());
    });
  }
});
