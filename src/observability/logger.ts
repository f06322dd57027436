import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';
import type { Config } from '../config/config.js';

/** pino-pretty is a development dependency: a production install has JSON lines only. */
function prettyInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

/** JSON lines in production; readable lines in development (when pino-pretty is installed). Tokens never reach the log. */
export function createLogger(config: Pick<Config, 'env' | 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'token', '*.token'], remove: true },
    ...(config.env === 'development' && prettyInstalled()
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } }
      : {}),
  });
}
