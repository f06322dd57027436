import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { nearMisses, nearMissWarning } from '../config/near-miss.js';

export interface ReadOptions {
  /** false: a tool that never connects (production's demand for DATABASE_URL does not apply). */
  database?: boolean;
  /** false: a tool that neither verifies nor mints tokens (production's demand for a token key does not apply). */
  tokens?: boolean;
  /** Where a near-miss variable's warning goes: stderr unless the caller logs it. */
  warn?: (message: string) => void;
}

/**
 * The configuration, or the variable that is wrong on stderr and exit code 2 (never a stack trace).
 * A variable that looks like a setting but is none is warned about first.
 */
export function readConfigOrExit({
  database = true,
  tokens = true,
  warn = (message) => console.error(`warning: ${message}`),
}: ReadOptions = {}): Config {
  for (const miss of nearMisses(process.env)) warn(nearMissWarning(miss));
  try {
    return loadConfig(process.env, { database, tokens });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
}
