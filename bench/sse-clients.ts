import http from 'node:http';

export interface SseClientsOptions {
  url: string;
  token: string;
  query: string;
  /** One stream per entry, watching that user. */
  userIds: string[];
}

export type SseClientsReport = { opened: number; failed: number; firstFailure: string | null };

const OPENING_AT_ONCE = 100;

// Runs in a child process (see cases/idle-subscriptions.ts): the streams' client side must not
// count in the server's memory. Opens every stream, waits for its first event, reports, then holds
// them idle until told to close.
process.once('message', async (options: SseClientsOptions) => {
  const requests: http.ClientRequest[] = [];
  const report: SseClientsReport = { opened: 0, failed: 0, firstFailure: null };
  const open = (userId: string) =>
    new Promise<void>((resolve) => {
      let settled = false;
      const done = (failure: string | null) => {
        if (settled) return;
        settled = true;
        if (failure === null) report.opened++;
        else {
          report.failed++;
          report.firstFailure ??= failure;
        }
        resolve();
      };
      const request = http.request(
        options.url,
        {
          method: 'POST',
          agent: false,
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${options.token}` },
        },
        (response) => {
          let head = '';
          response.setEncoding('utf8');
          response.on('error', () => undefined);
          response.on('end', () => done(`${response.statusCode} ended before its first event: ${head.slice(0, 300)}`));
          const onData = (chunk: string) => {
            head += chunk;
            const event = head.indexOf('event: next');
            if (event < 0 || !head.includes('\n\n', event)) return;
            response.off('data', onData);
            // Keep reading (and dropping) pings so the server never sees back-pressure.
            response.resume();
            done(response.statusCode === 200 && !head.includes('"errors"') ? null : `${response.statusCode} ${head.slice(0, 300)}`);
          };
          response.on('data', onData);
        },
      );
      request.on('error', (error) => done(error.message));
      request.end(JSON.stringify({ query: options.query, variables: { u: userId } }));
      requests.push(request);
    });
  for (let i = 0; i < options.userIds.length; i += OPENING_AT_ONCE) {
    await Promise.all(options.userIds.slice(i, i + OPENING_AT_ONCE).map(open));
  }
  process.send!(report);
  process.once('message', () => {
    for (const request of requests) request.destroy();
    process.send!({ closed: true }, () => process.disconnect());
  });
});
