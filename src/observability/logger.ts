import pino, { type Logger } from 'pino';
import type { Config } from '../config/config.js';

/** JSON lines in production; readable lines in development. Tokens never reach the log. */
export function createLogger(config: Pick<Config, 'env' | 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'token', '*.token'], remove: true },
    ...(config.env === 'development'
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } }
      : {}),
  });
}
