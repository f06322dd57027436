import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Real webhook receivers on loopback, each with what it saw (test/webhooks-isolation.test.ts, test/webhooks-lanes.test.ts). */

export interface Receiver {
  url: string;
  /** Requests received. */
  requests: number;
  close(): Promise<void>;
}

/**
 * `respond` answers a request (given its body), or returns 'hold' to keep it open; `onClosed` hears
 * when the sender closed a held request (its timeout, or a cut). Closing the receiver ends the rest.
 */
export async function receiver(
  respond: (req: http.IncomingMessage, res: http.ServerResponse, nth: number, body: string) => 'hold' | void,
  onClosed?: () => void,
): Promise<Receiver> {
  const held = new Set<http.ServerResponse>();
  let closing = false;
  const server = http.createServer((req, res) => {
    const nth = ++self.requests;
    const chunks: Buffer[] = [];
    req
      .on('data', (chunk: Buffer) => chunks.push(chunk))
      .on('end', () => {
        if (respond(req, res, nth, Buffer.concat(chunks).toString()) !== 'hold') return;
        held.add(res);
        res.on('close', () => {
          held.delete(res);
          if (!closing) onClosed?.();
        });
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const self: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests: 0,
    close: () => {
      closing = true;
      for (const res of held) res.destroy();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return self;
}

/**
 * Answers 200 and then writes a body without end, as fast as the connection takes it; `closed`
 * counts the responses whose connection the sender closed while the body was still being written.
 */
export async function endlessBody(): Promise<Receiver & { closed: () => number }> {
  let closed = 0;
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const endless = await receiver((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const pump = () => {
      while (!res.destroyed && res.write(chunk));
    };
    res.on('drain', pump).on('close', () => closed++);
    pump();
    return 'hold';
  });
  return Object.assign(endless, { closed: () => closed });
}

/** A real receiver on loopback that records each delivery's webhook-id: `answer` gives each request's status, or null to hold it open (test/webhooks-lanes.test.ts). */
export async function idRecordingReceiver(answer: () => number | null) {
  const ids: string[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) =>
    req.resume().on('end', () => {
      const status = answer();
      if (status === null) return void held.push(res);
      ids.push(String(req.headers['webhook-id']));
      res.writeHead(status).end();
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => {
    held.splice(0).forEach((res) => res.destroy());
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, ids, held, close };
}
