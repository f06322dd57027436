import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const PACKAGES = ['packages/sender', 'packages/settings-client'];

/**
 * The suite imports the workspace packages by name, as their users do: from their built dist/
 * (`exports`). Built first (incremental: a no-op when dist/ is current), so a fresh clone's
 * `npx vitest run …` and a just-edited package test what the source says.
 */
export function setup(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  for (const dir of PACKAGES) execFileSync(process.execPath, [tsc, '-p', dir], { stdio: 'inherit' });
}
