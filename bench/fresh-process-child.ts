// Forked by fresh-process.ts: runs one in-process case and sends its rows back.
import './production-mode.js';
import type { InProcessCase } from './case.js';
import type { FreshProcessJob } from './fresh-process.js';

process.once('message', async ({ module, exportName, sizes }: FreshProcessJob) => {
  try {
    const benchCase = (await import(module))[exportName] as InProcessCase;
    const rows = await benchCase.run(sizes);
    process.send!({ rows }, () => process.exit(0));
  } catch (error) {
    process.send!({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }, () => process.exit(1));
  }
});
