import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { buildInfo } from '../observability/build-info.js';
import { createLogger } from '../observability/logger.js';
import { answerStandardOptions } from './command-line.js';
import { readConfigOrExit } from './read-config.js';

const USAGE = `usage: node dist/src/main.js [--check-config]   (npm start in a checkout)

Serves the community layer's GraphQL API, configured by environment variables only (docs/settings.md).
  --check-config   read and validate the whole configuration, then exit without starting anything:
                   0 and "configuration OK" when valid, 2 and every problem when not
  --version        the version and the commit it was built from
  -h, --help       this text`;

/**
 * The server's command line: answers --help, --version and --check-config (each exits), refuses any
 * other argument, and otherwise hands back the configuration and the logger, after the start line
 * (the build's version and commit) and a warning per variable that looks like a setting but is none.
 */
export function serverStart(): { config: Config; logger: Logger } {
  answerStandardOptions(USAGE);
  const args = process.argv.slice(2);
  const unknown = args.find((argument) => argument !== '--check-config');
  if (unknown !== undefined) {
    console.error(`unknown argument: ${unknown}\n\n${USAGE}`);
    process.exit(2);
  }
  const warnings: string[] = [];
  const config = readConfigOrExit({ warn: (message) => warnings.push(message) });
  if (args.includes('--check-config')) {
    for (const warning of warnings) console.error(`warning: ${warning}`);
    console.log(`configuration OK (NODE_ENV=${config.env})`);
    process.exit(0);
  }
  const logger = createLogger(config);
  const { version, commit } = buildInfo();
  logger.info({ version, commit, env: config.env }, `community-layer ${version} (commit ${commit}) starting`);
  for (const warning of warnings) logger.warn(warning);
  return { config, logger };
}
