import type http from 'node:http';
import { Readable } from 'node:stream';

export type Reception = { body: Buffer } | 'late' | 'gone';

/**
 * Reads a request's whole body within `timeoutMs`: its bytes, or `late` (reading stops there), or
 * `gone` (the client closed first). Its length was checked against the body limit before.
 */
export function receiveBody(req: http.IncomingMessage, timeoutMs: number): Promise<Reception> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const finish = (reception: Reception) => {
      clearTimeout(deadline);
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      resolve(reception);
    };
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const onEnd = () => finish({ body: Buffer.concat(chunks) });
    const onClose = () => finish('gone');
    const deadline = setTimeout(() => {
      finish('late');
      req.pause();
    }, timeoutMs);
    req.on('data', onData).once('end', onEnd).once('close', onClose);
  });
}

/**
 * The request as Yoga reads it (through @whatwg-node/server: a readable with the request's
 * headers, method, url and socket), its body now from memory.
 */
export function withBody(req: http.IncomingMessage, body: Buffer): http.IncomingMessage {
  const { headers, method, url, socket, httpVersion } = req;
  return Object.assign(Readable.from([body], { objectMode: false }), {
    headers,
    method,
    url,
    socket,
    httpVersion,
  }) as unknown as http.IncomingMessage;
}
