import net from 'node:net';

export type CutPoint = 'after-commit' | 'before-statement';

/**
 * A TCP proxy between an app and PostgreSQL that loses one statement's reply, the way a network
 * fault does. Armed with `cut(marker, point)`, the next connection that sends a statement containing
 * `marker` is closed on both sides:
 * - 'after-commit': once PostgreSQL has sent ReadyForQuery for it (the implicit transaction has
 *   committed), without passing any of the reply on: the client cannot tell that it committed;
 * - 'before-statement': instead of forwarding the statement (nothing reaches PostgreSQL).
 *
 * It reads PostgreSQL's side as protocol messages (a type byte and an int32 length), so nothing of
 * the cut reply slips through.
 */
export class ReplyCuttingProxy {
  private readonly server = net.createServer((client) => this.connect(client));
  private readonly sockets = new Set<net.Socket>();
  private armed: { marker: string; point: CutPoint; done: () => void } | null = null;
  /** Statements seen containing the marker of the latest `cut`, cut or not. */
  markedStatements = 0;
  private marker = '';
  private target = { host: '', port: 0 };

  /** Listens on a free loopback port; returns `databaseUrl` rewritten to go through the proxy. */
  async start(databaseUrl: string): Promise<string> {
    const url = new URL(databaseUrl);
    this.target = { host: url.hostname, port: Number(url.port || 5432) };
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    url.host = `127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
    return url.toString();
  }

  /** Arms the proxy; resolves once a connection was cut. */
  cut(marker: string, point: CutPoint): Promise<void> {
    this.marker = marker;
    this.markedStatements = 0;
    return new Promise((resolve) => (this.armed = { marker, point, done: resolve }));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private connect(client: net.Socket): void {
    const upstream = net.connect(this.target);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      // A reset from either side just ends the pair.
      socket.on('error', () => undefined);
    }
    const cutBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());

    // Set once this connection sent the armed statement to PostgreSQL ('after-commit').
    let cutAfterReadyForQuery: (() => void) | null = null;
    let tail = '';
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      const marked = this.marker !== '' && (tail + text).includes(this.marker);
      tail = this.marker === '' ? '' : text.slice(-this.marker.length);
      if (marked) this.markedStatements++;
      const armed = this.armed;
      if (marked && armed) {
        this.armed = null;
        if (armed.point === 'before-statement') {
          cutBoth();
          armed.done();
          return;
        }
        cutAfterReadyForQuery = armed.done;
      }
      upstream.write(chunk);
    });

    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5 && pending.length >= 1 + pending.readInt32BE(1)) {
        const size = 1 + pending.readInt32BE(1);
        const message = pending.subarray(0, size);
        pending = pending.subarray(size);
        if (cutAfterReadyForQuery === null) {
          client.write(message);
        } else if (message[0] === 0x5a /* 'Z' ReadyForQuery */) {
          cutBoth();
          cutAfterReadyForQuery();
          return;
        }
      }
    });
  }
}
