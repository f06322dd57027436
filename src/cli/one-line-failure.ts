import { loadConfig, type Config } from '../config/config.js';
import { maskedDatabaseUrl } from '../config/database-url.js';
import { connectionFailure } from '../db/database-errors.js';

/** The log levels under which a tool's failure also prints its stack (LOG_LEVEL=debug or trace). */
const STACK_LEVELS: ReadonlySet<Config['logLevel']> = new Set(['debug', 'trace']);

/** Which database a tool works on, from its configuration: DATABASE_URL unless it says otherwise. */
export type ToolDatabase = (config: Config) => string | undefined;

/**
 * Called first by a command-line tool: whatever the tool does not handle itself ends it with one line on
 * stderr (`migrate: cannot connect to postgres://app:***@db:5432/community: password authentication
 * failed …`), exit code 1, and the stack only with LOG_LEVEL=debug or trace. The password is never shown.
 */
export function failInOneLine(tool: string, database: ToolDatabase | null = (config) => config.database.url): void {
  const fail = (error: unknown): never => {
    const config = quietConfig();
    const line = database === null ? `${tool}: ${describe(error)}` : failureLine(tool, error, config && database(config));
    process.stderr.write(`${line.replace(/\s*\n\s*/g, ' ')}\n`);
    if (config && STACK_LEVELS.has(config.logLevel) && error instanceof Error) process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
}

/** `tool: what failed against where: why`. */
export function failureLine(tool: string, error: unknown, url: string | undefined): string {
  // The query part is left out: libpq's form lets it carry a password.
  const where = url ? maskedDatabaseUrl(url).split('?')[0] : 'the embedded database';
  const connecting = connectionFailure(error);
  return connecting === null ? `${tool}: failed on ${where}: ${describe(error)}` : `${tool}: cannot connect to ${where}: ${connecting}`;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const message = error.message || (error instanceof AggregateError ? String(error.errors[0]) : error.name);
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? `${message} (SQLSTATE ${code})` : message;
}

/** The configuration for the report, or none when it is the configuration that is wrong (reported on its own). */
function quietConfig(): Config | undefined {
  try {
    return loadConfig(process.env, { database: false });
  } catch {
    return undefined;
  }
}
