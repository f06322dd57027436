import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/support/slow-first.js';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS and ESM without an exports map: Node (and every dependency) loads the
    // CJS build, Vite would give our code the ESM one, and two GraphQLError classes break
    // instanceof checks. Use the build Node uses.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    globalSetup: ['test/support/build-packages.ts', 'test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // A worker keeps its imported modules from one file to the next (the service has no
    // module-level mutable state, and several apps share a process by design): each file importing
    // the whole server afresh was a third of the run.
    isolate: false,
    // Vitest's default is one worker per core but one (2 - 1 on this machine): the files would run
    // one after the other, though most of their time is spent waiting on PostgreSQL, servers and
    // clocks. Three at a time, each on a database of its own (two suites side by side still pass).
    maxWorkers: 3,
    sequence: { sequencer: SlowFirstSequencer },
  },
});
