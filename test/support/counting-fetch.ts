/** A fetch that records what each client puts on the wire: method, query string and body. */
export interface Sent {
  method: string;
  url: URL;
  body: Record<string, any> | null;
}

export function countingFetch(): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const counted = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const text = request.method === 'GET' ? '' : await request.clone().text();
    sent.push({ method: request.method, url: new URL(request.url), body: text ? (JSON.parse(text) as Record<string, any>) : null });
    return fetch(request);
  }) as typeof fetch;
  return { fetch: counted, sent };
}
