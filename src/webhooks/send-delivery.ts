import http from 'node:http';
import https from 'node:https';
import { AddressNotAllowed, type DestinationPolicy } from './destination-policy.js';

/**
 * What the endpoint's owner reads for every attempt that got no HTTP answer: refused, reset, timed
 * out, not HTTP, a name that does not resolve or resolves to an address not allowed. One answer for
 * all, so the admin API tells neither whether an internal name exists nor whether a port is open.
 */
export const NO_RESPONSE = 'no response';
/** How much of a response body is read: past it the connection is closed, never drained. */
export const RESPONSE_BODY_MAX_BYTES = 4096;

export type Sent =
  | { ok: true; statusCode: number }
  /** `error` is what the admin reads; `detail` only the operator's log; `retryAfterMs` a 429's or 503's Retry-After. */
  | { ok: false; statusCode: number | null; error: string; detail: string; retryAfterMs: number | null };

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
 * the connection goes to the address that was checked. Redirects are not followed. It settles on
 * the status line; the body is read in the background up to RESPONSE_BODY_MAX_BYTES (so a short
 * one leaves the connection for reuse), and a longer one's connection is destroyed. `cut` aborts
 * the attempt early (the slow lane was full, delivery-attempt.ts).
 */
export function sendDelivery(sender: Sender, url: string, headers: Record<string, string>, body: string, cut?: AbortSignal): Promise<Sent> {
  const refusal = sender.policy.refusal(url);
  if (refusal !== null) return Promise.resolve(noResponse(`refused before lookup: ${refusal}`));
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const timeout = AbortSignal.timeout(sender.timeoutMs);
  const signal = cut ? AbortSignal.any([timeout, cut]) : timeout;
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
      readCapped(response);
      if (statusCode >= 200 && statusCode < 300) return settle({ ok: true, statusCode });
      const retryAfter = statusCode === 429 || statusCode === 503 ? retryAfterMs(response.headers['retry-after']) : null;
      settle({ ok: false, statusCode, error: `HTTP ${statusCode}`, detail: `HTTP ${statusCode}`, retryAfterMs: retryAfter });
    });
    request.on('error', (error: NodeJS.ErrnoException) => settle(noResponse(detail(error, timeout, cut))));
    request.end(body);
  });
}

/** Reads at most RESPONSE_BODY_MAX_BYTES (and the chunk that crosses it), then closes the connection. */
function readCapped(response: http.IncomingMessage): void {
  let read = 0;
  response
    .on('error', () => undefined)
    .on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > RESPONSE_BODY_MAX_BYTES) response.destroy();
    });
}

/** Retry-After as delay-seconds or an HTTP-date (RFC 9110 §10.2.3), in milliseconds from now; null when absent or unreadable. */
export function retryAfterMs(value: string | undefined): number | null {
  const text = value?.trim() ?? '';
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = text === '' ? Number.NaN : Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

function noResponse(detail: string): Sent {
  return { ok: false, statusCode: null, error: NO_RESPONSE, detail, retryAfterMs: null };
}

/** What the operator's log says (never the admin API): which of the causes NO_RESPONSE covers. */
function detail(error: NodeJS.ErrnoException, timeout: AbortSignal, cut: AbortSignal | undefined): string {
  if (cut?.aborted) return 'cut: slow past WEBHOOK_SLOW_MS with the slow lane full';
  if (timeout.aborted) return 'timeout';
  if (error instanceof AddressNotAllowed) return 'address not allowed';
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return `name not resolved (${error.code})`;
  return `connection failed (${error.code ?? error.message})`;
}
