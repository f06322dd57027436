import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Hostile webhook receivers in a process of their own (forked by the webhook isolation case), so
 * holding requests and writing endless bodies take nothing from the event loop that times the
 * healthy endpoint's deliveries. By path: /hang/<n> holds every request open until the sender
 * gives up; /flap/<n> answers 200, then holds the next, in turn; /endless answers 200 and then
 * writes a body without end, as fast as the connection takes it.
 */
const counts = new Map<string, number>();
const chunk = Buffer.alloc(64 * 1024, 'x');
const server = http.createServer((req, res) =>
  req.resume().on('end', () => {
    const path = req.url ?? '';
    const nth = (counts.get(path) ?? 0) + 1;
    counts.set(path, nth);
    if (path.startsWith('/hang') || (path.startsWith('/flap') && nth % 2 === 0)) return;
    if (path !== '/endless') return void res.writeHead(200).end();
    res.writeHead(200);
    const pump = () => {
      while (!res.destroyed && res.write(chunk));
    };
    res.on('drain', pump).on('error', () => undefined);
    pump();
  }),
);
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('disconnect', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
