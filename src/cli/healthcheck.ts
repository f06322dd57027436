import { readConfigOrExit } from './read-config.js';
import { answerStandardOptions } from './command-line.js';

answerStandardOptions(
  `usage: node dist/src/cli/healthcheck.js\n\nThe image's HEALTHCHECK: exit 0 when this instance's /readyz (127.0.0.1:PORT) answers 200, 1 otherwise.`,
);

/**
 * The image's HEALTHCHECK: exit 0 when this instance's /readyz answers 200, 1 otherwise. It runs
 * inside the container, so it asks over loopback on the configured port.
 */
// Quiet about near-miss variables: it runs every few seconds, and the server warned at start.
const { port } = readConfigOrExit({ database: false, warn: () => undefined }).http;
try {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3_000) });
  if (!response.ok) console.error(`healthcheck: http://127.0.0.1:${port}/readyz answered ${response.status}`);
  process.exit(response.ok ? 0 : 1);
} catch (error) {
  // One line for `docker inspect`'s health log: what failed, and where.
  const cause = error instanceof Error ? ((error.cause as { code?: string } | undefined)?.code ?? error.message) : String(error);
  console.error(`healthcheck: http://127.0.0.1:${port}/readyz: ${cause}`);
  process.exit(1);
}
