/**
 * The layering rule (docs/architecture.md). From top to bottom; each layer imports only from the
 * layers below it, never up, and no files import each other in a circle:
 *   8 entry points   src/main.ts, src/cli/, bench/, scripts/, the tests (test/, packages/<name>/test/)
 *   7 tooling        tooling/: what entry points share (the one start-up, the embedded PostgreSQL
 *                    launcher, template databases, PgBouncer, server processes); never createApp's
 *   6 composition    src/app.ts and the builders beside it in src/app/
 *   5 transports     src/server/, src/settings/
 *   4 API            src/api/ (reaches capabilities through their service objects, never a *.store.ts)
 *   3 capabilities   src/membership/, src/signals/, src/purge/, src/webhooks/, src/budgets/, src/export/ (no GraphQL)
 *   2 platform       src/auth/, src/db/
 *   1 base kit       src/graphql/, src/observability/, src/config/, src/ids/, src/time/, src/util/
 * The workspace packages (packages/*: the sender, the settings client) are libraries others install:
 * they import none of the service's code, and the service reaches them only by package name.
 * `npm run layers` checks it; CI fails on a new upward import.
 */
const ENTRY = '^(src/main\\.ts|src/cli/|bench/|scripts/|test/|test-browser/|packages/[^/]+/test/)';
const TOOLING = '^tooling/';
const COMPOSITION = '^src/app(\\.ts$|/)';
const TRANSPORTS = '^src/(server|settings)/';
const API = '^src/api/';
const CAPABILITIES = '^src/(membership|signals|purge|webhooks|budgets|export)/';
const PLATFORM = '^src/(auth|db)/';
const BASE = '^src/(graphql|observability|config|ids|time|util)/';

const above = {
  [TOOLING]: [ENTRY],
  [COMPOSITION]: [ENTRY, TOOLING],
  [TRANSPORTS]: [ENTRY, TOOLING, COMPOSITION],
  [API]: [ENTRY, TOOLING, COMPOSITION, TRANSPORTS],
  [CAPABILITIES]: [ENTRY, TOOLING, COMPOSITION, TRANSPORTS, API],
  [PLATFORM]: [ENTRY, TOOLING, COMPOSITION, TRANSPORTS, API, CAPABILITIES],
  [BASE]: [ENTRY, TOOLING, COMPOSITION, TRANSPORTS, API, CAPABILITIES, PLATFORM],
};

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Files that import each other in a loop.', from: {}, to: { circular: true } },
    ...Object.entries(above).map(([layer, higher]) => ({
      name: `no-upward-import`,
      severity: 'error',
      comment: 'A layer imports only from the layers below it (see the header of this file).',
      from: { path: layer },
      to: { path: higher.map((pattern) => `(${pattern})`).join('|') },
    })),
    {
      name: 'capabilities-without-graphql',
      severity: 'error',
      comment: 'Capabilities know nothing of GraphQL: the API maps their results and errors.',
      from: { path: CAPABILITIES },
      to: { path: '(^|/)node_modules/(graphql|graphql-yoga|@pothos)/' },
    },
    {
      name: 'api-without-stores',
      severity: 'error',
      comment:
        'The API reaches a capability through its service objects (src/api/context.ts), never through its store (*.store.ts), ' +
        'not even for a type: one way into each table family.',
      from: { path: API },
      to: { path: '\\.store\\.ts$' },
    },
    {
      name: 'production-code-without-tests',
      severity: 'error',
      comment: 'Code under src/ never imports test support.',
      from: { path: '^src/' },
      to: { path: '^(test|test-browser)/' },
    },
    {
      name: 'packages-stand-alone',
      severity: 'error',
      comment:
        'A workspace package is installed by other services: its code never imports the server or its tests. Its own tests (packages/*/test/, never published) run it against the real server.',
      from: { path: '^packages/', pathNot: '^packages/[^/]+/test/' },
      to: { path: '^(src|tooling|test|test-browser|bench|scripts|examples)/' },
    },
    {
      name: 'packages-by-name',
      severity: 'error',
      comment: 'The service uses a workspace package only as its users do: by its name, never by a path into packages/.',
      from: { path: '^(src|tooling|bench|scripts)/' },
      to: { path: '^packages/', dependencyTypesNot: ['aliased-workspace'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: { path: '^(src|tooling|bench|scripts|packages)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.json'],
    },
  },
};
