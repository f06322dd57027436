import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../util/project-root.js';

/** Which build runs: package.json's version and the commit it was built from. */
export interface BuildInfo {
  version: string;
  /** The commit's full hash (`-dirty` with uncommitted changes), or "unknown" (built or run outside a git checkout). */
  commit: string;
}

/** Written by `npm run build` (scripts/fresh-build.mjs --stamp): a production install has no git. */
export const BUILD_INFO_FILE = 'dist/build-info.json';

let known: BuildInfo | undefined;

/** Read once, from the project root (the folder holding package.json). */
export function buildInfo(): BuildInfo {
  if (known) return known;
  const here = fileURLToPath(import.meta.url);
  const root = projectRoot();
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  // Compiled code takes the commit its build stamped; sources (tsx, the tests) ask git.
  const compiled = here.split(path.sep).includes('dist');
  known = { version, commit: compiled ? stampedCommit(root) : gitCommit(root) };
  return known;
}

function stampedCommit(root: string): string {
  try {
    const { commit } = JSON.parse(readFileSync(path.join(root, BUILD_INFO_FILE), 'utf8')) as { commit?: unknown };
    return typeof commit === 'string' && commit ? commit : 'unknown';
  } catch {
    return 'unknown';
  }
}

function gitCommit(root: string): string {
  try {
    // As scripts/fresh-build.mjs stamps it.
    return execFileSync('git', ['describe', '--always', '--dirty', '--abbrev=40'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'unknown';
  }
}
