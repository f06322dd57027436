import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { generate } from '../examples/codegen.js';
import type { App } from '../src/app.js';
import { startApp, token, useCluster, type Cluster } from './support/harness.js';

let cluster: Cluster;
useCluster([{}], (started) => (cluster = started));

const run = promisify(execFile);

/** The typed example client (examples/): generated, typechecked with strictScalars, run against a real server. */
describe('examples: a typed client from codegen', () => {
  it('generates, typechecks, and runs against a server that accepts trusted documents only', async () => {
    await generate();
    await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'examples/tsconfig.json'], {
      cwd: new URL('..', import.meta.url).pathname,
    });
    const server: App = await startApp(cluster.databaseUrl, { GRAPHQL_TRUSTED_DOCUMENTS: 'only' });
    try {
      // Imported by a computed path: the client needs the generated code, which `npm run typecheck` does not.
      const client = '../examples/client.js';
      const { runExample } = (await import(client)) as {
        runExample(url: string, bearer: string, userId: string, itemId: string): Promise<unknown>;
      };
      const outcome = await runExample(server.url, await token('1', 'community:admin signals:write'), '4201', 'example-item');
      // Exact: 0.1 + 0.2 + 1e6 as decimals, not as doubles.
      expect(outcome).toEqual({
        signalTotal: '3',
        weightTotal: '1000000.3',
        cohortSignalTotal: '3',
        gatedSignalTotal: '2',
        contributions: 6,
        pages: 3,
      });
    } finally {
      await server.stop();
    }
  });
});
