import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver in a process of its own (forked by the downstream case), so answering
 * deliveries takes nothing from the event loop that times the leaves: it answers every POST 204.
 */
const server = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('disconnect', () => server.close(() => process.exit(0)));
