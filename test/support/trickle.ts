import http from 'node:http';

export interface Trickle {
  /** The status and body once the server answers (null: closed without an answer). */
  response: Promise<{ status: number; body: string } | null>;
  close(): void;
}

/**
 * A client that announces a large body and then sends it one byte every `everyMs`, the way a
 * slow-loris attack does. It stops by itself after `maxBytes` (bounded), or when answered.
 */
export function trickle(
  url: string,
  options: { bearer?: string; localAddress?: string; contentLength?: number; everyMs?: number; maxBytes?: number } = {},
): Trickle {
  const request = http.request(url, {
    method: 'POST',
    agent: false,
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    headers: {
      'content-type': 'application/json',
      'content-length': options.contentLength ?? 60_000,
      ...(options.bearer ? { authorization: `Bearer ${options.bearer}` } : {}),
    },
  });
  request.flushHeaders();
  let sent = 0;
  const timer = setInterval(() => {
    if (sent++ >= (options.maxBytes ?? 600) || request.destroyed) return clearInterval(timer);
    request.write(sent === 1 ? '{' : ' ');
  }, options.everyMs ?? 100);
  const response = new Promise<{ status: number; body: string } | null>((resolve) => {
    request.once('response', (res) => {
      clearInterval(timer);
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
      res.once('error', () => resolve(null));
    });
    request.once('close', () => {
      clearInterval(timer);
      resolve(null);
    });
    request.on('error', () => undefined);
  });
  return {
    response,
    close: () => {
      clearInterval(timer);
      request.destroy();
    },
  };
}
