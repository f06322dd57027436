// `node scripts/cli.mjs NAME [ARGS…]`: runs the command-line tool src/cli/NAME.ts from the sources with
// tsx where the development dependencies are (a checkout: always current, no build needed), and its
// compiled form dist/src/cli/NAME.js in a production install (no tsx), after the freshness check of
// scripts/fresh-build.mjs. Plain JavaScript on purpose, like fresh-build.mjs: nothing compiles it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const [name, ...args] = process.argv.slice(2);
if (!name || !/^[a-z-]+$/.test(name)) {
  console.error('usage: node scripts/cli.mjs NAME [ARGS…]  (a tool of src/cli/)');
  process.exit(2);
}
const run = (command) => spawnSync(process.execPath, command, { stdio: 'inherit' }).status ?? 1;
if (existsSync('node_modules/tsx')) process.exit(run(['--import', 'tsx', `src/cli/${name}.ts`, ...args]));
const fresh = run(['scripts/fresh-build.mjs']);
process.exit(fresh === 0 ? run([`dist/src/cli/${name}.js`, ...args]) : fresh);
