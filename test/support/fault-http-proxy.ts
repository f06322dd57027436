import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does with one request. */
export type Fault = 'pass' | { status: 503 | 429; retryAfter: string } | 'cut-after-reply';

/**
 * An HTTP proxy on loopback in front of a real server that injects faults, request by request:
 * refuse with 503/429 and Retry-After (nothing reaches the server), or forward and then drop the
 * connection instead of passing the reply on (the server committed; the client cannot know).
 */
export class FaultHttpProxy {
  private readonly server: http.Server;
  requests = 0;
  /** Every request that reached the server, in order, and whether its reply reached the client. */
  readonly forwarded: { body: string; reply: string; delivered: boolean }[] = [];

  constructor(
    private readonly target: string,
    private readonly plan: (request: number) => Fault,
  ) {
    this.server = http.createServer((request, response) => void this.handle(request, response));
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${new URL(this.target).pathname}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const fault = this.plan(++this.requests);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (typeof fault === 'object') {
      response.writeHead(fault.status, { 'content-type': 'application/json', 'retry-after': fault.retryAfter });
      response.end(JSON.stringify({ errors: [{ message: 'injected', extensions: { code: 'SERVICE_UNAVAILABLE' } }] }));
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
    ) as Record<string, string>;
    const upstream = await fetch(this.target, { method: request.method!, headers, body: Buffer.concat(chunks) });
    const body = Buffer.from(await upstream.arrayBuffer());
    this.forwarded.push({
      body: Buffer.concat(chunks).toString('utf8'),
      reply: body.toString('utf8'),
      delivered: fault !== 'cut-after-reply',
    });
    if (fault === 'cut-after-reply') {
      request.socket.destroy();
      return;
    }
    const passed = [...upstream.headers].filter(
      ([name]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name),
    );
    response.writeHead(upstream.status, Object.fromEntries(passed));
    response.end(body);
  }
}
