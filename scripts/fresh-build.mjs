// Plain JavaScript on purpose: it runs before anything is compiled, and in a production install
// (no tsx, no TypeScript). `--stamp` marks a finished build (the last step of `npm run build`);
// without it, dist/ is built first when it is missing or older than a source (`npm start`, the CLIs).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const STAMP = 'dist/.build-stamp';
/** The version and commit a production install reports (src/observability/build-info.ts): it has no git. */
const INFO = 'dist/build-info.json';
/** What `npm run build` reads: the sources, the operation documents, the compiler settings. */
const SOURCES = ['src', 'tooling', 'packages', 'examples/operations.graphql', 'tsconfig.json', 'tsconfig.build.json'];

/** Files only: a folder's time changes when a copy of the tree creates it (a release unpacked elsewhere). */
function newestChange(entry) {
  if (!existsSync(entry)) return 0;
  const info = statSync(entry);
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(0, ...readdirSync(entry).map((name) => newestChange(path.join(entry, name))));
}

/**
 * The commit, with `-dirty` when the tree had uncommitted changes (it is then not quite that commit);
 * outside a git checkout (a source tarball) "unknown", and the service says so.
 */
function buildInfo() {
  const { version } = JSON.parse(readFileSync('package.json', 'utf8'));
  const git = spawnSync('git', ['describe', '--always', '--dirty', '--abbrev=40'], { encoding: 'utf8' });
  const commit = git.status === 0 ? git.stdout.trim() : 'unknown';
  if (commit === 'unknown') console.error('build: not a git checkout; the build reports commit "unknown"');
  return { version, commit };
}

if (process.argv.includes('--stamp')) {
  writeFileSync(INFO, `${JSON.stringify(buildInfo())}\n`);
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  process.exit(0);
}
const built = existsSync(STAMP) ? statSync(STAMP).mtimeMs : 0;
if (built > 0 && Math.max(...SOURCES.map(newestChange)) <= built) process.exit(0);
// tsx is a development dependency only (TypeScript may come as an optional peer of a runtime one).
if (!existsSync('node_modules/tsx')) {
  console.error(
    built
      ? 'dist/ is older than the sources, and this install has no development tools (a production install): build where the development dependencies are (`npm run build`) and ship dist/ with the sources it was built from.'
      : 'dist/ is missing, and this install has no development tools (a production install): run `npm run build` where the development dependencies are, then install with `npm ci --omit=dev`.',
  );
  process.exit(1);
}
// The build's output goes to stderr: `npm run -s token …` prints the token alone on stdout.
const build = spawnSync('npm', ['run', 'build'], { stdio: ['ignore', 2, 2] });
process.exit(build.status ?? 1);
