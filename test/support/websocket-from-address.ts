import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { App } from '../../src/app.js';

/** One operation over graphql-ws from `localAddress` (loopback answers from any 127/8 address): its answer, or its errors. */
export function operationFrom(app: App, localAddress: string, query: string) {
  return new Promise<{ data?: unknown; errors?: { extensions?: Record<string, unknown> }[] }>((resolve, reject) => {
    const from = class extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { localAddress });
      }
    };
    const client = createClient({ url: app.url.replace(/^http/, 'ws'), webSocketImpl: from, retryAttempts: 0, lazyCloseTimeout: 0 });
    let answer: { data?: unknown; errors?: { extensions?: Record<string, unknown> }[] } = {};
    client.subscribe(
      { query },
      {
        next: (value) => (answer = value as typeof answer),
        error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error)),
        complete: () => resolve(answer),
      },
    );
  });
}
