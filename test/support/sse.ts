import type { App } from '../../src/app.js';

export interface SseEvent {
  event: string;
  data: any;
}

/** A GraphQL subscription over server-sent events, read event by event. */
export async function subscribe(app: App, query: string, variables: Record<string, unknown>, bearer: string | null) {
  const abort = new AbortController();
  const response = await fetch(app.url, {
    method: 'POST',
    signal: abort.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
    },
    body: JSON.stringify({ query, variables }),
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const pending: SseEvent[] = [];
  return {
    status: response.status,
    headers: response.headers,
    /** The next event, or null when the stream ended. */
    async next(): Promise<SseEvent | null> {
      for (;;) {
        if (pending.length > 0) return pending.shift()!;
        const boundary = buffer.indexOf('\n\n');
        if (boundary >= 0) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          const event = /^event: ?(.*)$/m.exec(block)?.[1] ?? 'message';
          const data = /^data: ?(.*)$/m.exec(block)?.[1];
          if (data !== undefined || event === 'complete') pending.push({ event, data: data ? JSON.parse(data) : null });
          continue;
        }
        const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (chunk.done) return null;
        buffer += chunk.value;
      }
    },
    close: () => abort.abort(),
  };
}
