import { ConfigError, loadConfig, type Config } from '../config/config.js';

/** The configuration, or the variable that is wrong on stderr and exit code 2 (never a stack trace). */
export function readConfigOrExit(): Config {
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
}
