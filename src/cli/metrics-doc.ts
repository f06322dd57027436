import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MetricObject } from 'prom-client';
import { appParts } from '../app.js';
import { loadConfig, resolveConfig } from '../config/config.js';
import { projectRoot } from '../util/project-root.js';
import { answerStandardOptions } from './command-line.js';

answerStandardOptions(`usage: npm run metrics:doc | npm run metrics:check (node dist/src/cli/metrics-doc.js [--check])

Writes the metrics table of docs/operations.md from the metrics an app registers; --check fails
(exit 1) when the committed table is stale.`);

const FILE = path.join(projectRoot(), 'docs/operations.md');
const [BEGIN, END] = ['<!-- metrics:begin -->', '<!-- metrics:end -->'];
const DEFAULTS = /^(process|nodejs)_/;

/**
 * Every metric an instance exports, from an app built and never started (nothing connects), with
 * a remote key set so that its fetch counters are registered too.
 */
function exportedMetrics(): MetricObject[] {
  const databaseUrl = 'postgres://metrics-doc@127.0.0.1:9/none';
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    AUTH_JWKS_URL: 'https://idp.invalid/jwks.json',
  });
  const { instance } = appParts(resolveConfig(config, { databaseUrl, authKey: { kind: 'jwks', url: 'https://idp.invalid/jwks.json' } }));
  return instance.services.metrics.registry.getMetricsAsArray();
}

function table(metrics: MetricObject[]): string {
  const described = (metric: MetricObject) => metric as unknown as { name: string; help: string; type: string; labelNames: string[] };
  const own = metrics
    .map(described)
    .filter((metric) => !DEFAULTS.test(metric.name))
    .sort((a, b) => a.name.localeCompare(b.name));
  const defaults = metrics
    .map(described)
    .filter((metric) => DEFAULTS.test(metric.name))
    .map((metric) => `\`${metric.name}\``);
  return [
    BEGIN,
    '<!-- Generated from the code by `npm run metrics:doc`; CI checks it with `npm run metrics:check`. -->',
    '',
    '| metric | type | labels | meaning |',
    '|---|---|---|---|',
    ...own.map(
      (metric) =>
        `| \`${metric.name}\` | ${metric.type} | ${metric.labelNames.map((label) => `\`${label}\``).join(', ')} | ${metric.help.replaceAll('|', '\\|')} |`,
    ),
    `| prom-client's defaults | | | ${defaults.join(', ')} (its three \`nodejs_active_*_total\` gauges left out: their sums are in \`nodejs_active_*{type}\`) |`,
    END,
  ].join('\n');
}

const current = await readFile(FILE, 'utf8');
const [before, rest] = current.split(BEGIN);
const after = rest?.split(END)[1];
if (before === undefined || after === undefined) throw new Error(`${FILE}: no ${BEGIN} … ${END} section`);
const rendered = before + table(exportedMetrics()) + after;
if (process.argv.includes('--check')) {
  if (rendered !== current) {
    console.error('docs/operations.md: the metrics table is out of date: run `npm run metrics:doc`');
    process.exit(1);
  }
  console.log('docs/operations.md: the metrics table is up to date');
} else {
  await writeFile(FILE, rendered);
  console.log('wrote the metrics table of docs/operations.md');
}
process.exit(0);
