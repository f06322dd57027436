import http from 'node:http';
import https from 'node:https';
import { AddressNotAllowed, ADDRESS_NOT_ALLOWED, type DestinationPolicy } from './destination-policy.js';

export type Sent = { ok: true; statusCode: number } | { ok: false; statusCode: number | null; error: string };

export interface Sender {
  policy: DestinationPolicy;
  timeoutMs: number;
  /** Keep-alive connections per instance; a reused socket goes to the address checked when it opened. */
  agents: { http: http.Agent; https: https.Agent };
}

export function newAgents(): Sender['agents'] {
  return { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
}

/**
 * POSTs one signed delivery with Node's http(s).request, whose `lookup` is the destination policy's:
 * the connection goes to the address that was checked. Redirects are not followed. What it answers
 * is what the admin sees (`lastError`): the HTTP status, "timeout", "address not allowed", "name not
 * resolved" or "connection failed", never the socket error, which would tell an internal port that
 * is closed from one that is open or not HTTP.
 */
export function sendDelivery(sender: Sender, url: string, headers: Record<string, string>, body: string): Promise<Sent> {
  const refusal = sender.policy.refusal(url);
  if (refusal !== null) return Promise.resolve({ ok: false, statusCode: null, error: ADDRESS_NOT_ALLOWED });
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const signal = AbortSignal.timeout(sender.timeoutMs);
  return new Promise<Sent>((settle) => {
    const request = (secure ? https : http).request(target, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: secure ? sender.agents.https : sender.agents.http,
      lookup: sender.policy.lookup,
      signal,
    });
    request.on('response', (response) => {
      const statusCode = response.statusCode ?? 0;
      response.on('error', () => undefined).resume(); // drained, or cut by the same deadline
      settle(statusCode >= 200 && statusCode < 300 ? { ok: true, statusCode } : { ok: false, statusCode, error: `HTTP ${statusCode}` });
    });
    request.on('error', (error: NodeJS.ErrnoException) => settle({ ok: false, statusCode: null, error: failure(error, signal) }));
    request.end(body);
  });
}

function failure(error: NodeJS.ErrnoException, signal: AbortSignal): string {
  if (signal.aborted) return 'timeout';
  if (error instanceof AddressNotAllowed) return ADDRESS_NOT_ALLOWED;
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return 'name not resolved';
  return 'connection failed';
}
