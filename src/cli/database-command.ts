import type { Kysely } from 'kysely';
import { connectDatabase } from '../db/database.js';
import type { Config } from '../config/config.js';
import type { Database } from '../db/schema.js';
import { createLogger } from '../observability/logger.js';
import { readConfigOrExit } from './read-config.js';

/** A usage error: its message and exit code 2. */
export class UsageError extends Error {}

/**
 * Runs an operator's command on the database the servers use (DATABASE_URL): `run` answers the
 * exit code. A usage error prints the message and the usage; a refusal the code throws is printed
 * as `prefix: message` with exit code 1, never a stack trace.
 */
export async function runDatabaseCommand(
  usage: string,
  run: (db: Kysely<Database>, config: Config) => Promise<number>,
  refusal: (error: unknown) => string | null,
): Promise<never> {
  const config = readConfigOrExit();
  if (!config.database.url) {
    console.error('DATABASE_URL: set it to the database the servers use');
    process.exit(2);
  }
  const database = connectDatabase({ url: config.database.url, poolMax: 1, logger: createLogger(config) });
  let code: number;
  try {
    code = await run(database.db, config);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${usage}`);
      code = 2;
    } else {
      const message = refusal(error);
      if (message === null) throw error;
      console.error(message);
      code = 1;
    }
  } finally {
    await database.close();
  }
  process.exit(code);
}

/** The positional argument at `index`, or a usage error naming it. */
export function positional(values: string[], index: number, name: string): string {
  const value = values[index];
  if (value === undefined || value === '') throw new UsageError(`missing <${name}>`);
  return value;
}

/** A UInt64 id argument that fits PostgreSQL's bigint. */
export function idArgument(value: string, name: string): string {
  if (!/^[0-9]{1,19}$/.test(value) || BigInt(value) > 2n ** 63n - 1n) throw new UsageError(`<${name}> must be a decimal id`);
  return value;
}
