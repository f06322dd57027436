import net from 'node:net';

/**
 * A TCP proxy that can go silent: while stalled, it keeps every connection open and accepts new
 * ones, but forwards nothing either way — a database behind a dead network path, which no socket
 * error reports. `resume()` forwards again, including what was held back.
 */
export class StallingProxy {
  private readonly server = net.createServer((client) => this.connect(client));
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  private target = { host: '', port: 0 };
  private stalled = false;

  /** Listens on a free loopback port; returns `databaseUrl` rewritten to go through the proxy. */
  async start(databaseUrl: string): Promise<string> {
    const url = new URL(databaseUrl);
    this.target = { host: url.hostname, port: Number(url.port || 5432) };
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    url.host = `127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
    return url.toString();
  }

  stall(): void {
    this.stalled = true;
    for (const { client, upstream } of this.pairs) {
      client.pause();
      upstream.pause();
    }
  }

  resume(): void {
    this.stalled = false;
    for (const { client, upstream } of this.pairs) {
      client.resume();
      upstream.resume();
    }
  }

  get connections(): number {
    return this.pairs.size;
  }

  async stop(): Promise<void> {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private connect(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    const pair = { client, upstream };
    this.pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    if (this.stalled) {
      client.pause();
      upstream.pause();
    }
    const close = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }
}
