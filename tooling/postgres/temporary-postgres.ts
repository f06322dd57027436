import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Binaries } from './embedded/binaries.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './embedded.js';

/**
 * An embedded PostgreSQL in a new temporary folder, removed again by `stop` (schema dumps, tests,
 * the bench, `npm run cluster`). `database` is created if it is not "postgres". `binaries`: another
 * build than npm's (an older major).
 */
export async function startTemporaryPostgres(database: string, binaries?: Binaries): Promise<EmbeddedDatabase> {
  const parent = await mkdtemp(path.join(tmpdir(), 'community-layer-pg-'));
  const removeParent = () => rm(parent, { recursive: true, force: true });
  try {
    // As root the embedded server runs as "postgres", which must be able to enter this folder.
    await chmod(parent, 0o755);
    const embedded = await startEmbeddedPostgres({
      dataDir: path.join(parent, 'pg'),
      database,
      persistent: false,
      log: () => undefined,
      binaries,
    });
    return {
      ...embedded,
      stop: async () => {
        await embedded.stop();
        await removeParent();
      },
    };
  } catch (error) {
    await removeParent();
    throw error;
  }
}
