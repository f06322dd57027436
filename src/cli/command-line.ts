import { buildInfo } from '../observability/build-info.js';

/** `community-layer 0.1.0 (commit 6e93233…)`: what `--version` prints, the same for the server and every tool. */
export function versionLine(): string {
  const { version, commit } = buildInfo();
  return `community-layer ${version} (commit ${commit})`;
}

/**
 * `--version` and `--help` (`-h`) of every command, answered before anything else is read (no
 * configuration, no database): both print to stdout and exit 0. Arguments after `--` are values.
 */
export function answerStandardOptions(usage: string, args: readonly string[] = process.argv.slice(2)): void {
  const end = args.indexOf('--');
  const options = end === -1 ? args : args.slice(0, end);
  if (options.includes('--version')) exitWith(versionLine());
  if (options.includes('--help') || options.includes('-h')) exitWith(usage);
}

function exitWith(text: string): never {
  console.log(text);
  process.exit(0);
}

/** A command that takes no arguments: any given is a usage error (exit 2), never ignored. */
export function refuseArguments(usage: string, args: readonly string[] = process.argv.slice(2)): void {
  if (args.length === 0) return;
  console.error(`unknown argument: ${args[0]}\n\n${usage}`);
  process.exit(2);
}
