import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Row, Sizes } from './case.js';
import { num } from './format.js';

export function markdownTable(rows: readonly Row[]): string {
  const lines = [
    '| case | figure | ceiling | ratio | target | met? |',
    '|---|---|---|---|---|---|',
    ...rows.map((row) =>
      row.crashed
        ? `| ${row.case} | crashed: ${row.crashed.replaceAll('|', '/').replaceAll('\n', ' ')} | — | — | ${row.target} | CRASHED |`
        : `| ${row.case} | ${row.figure} | ${row.ceiling} | ${row.ratio === null ? '—' : num(row.ratio, 2)} | ${row.target} | ${row.met === null ? '—' : row.met ? 'yes' : 'no'} |`,
    ),
  ];
  return lines.join('\n');
}

export function summaryLine(mode: string, rows: readonly Row[]): string {
  const ran = rows.filter((row) => !row.crashed).length;
  const withTarget = rows.filter((row) => row.target !== '—');
  const met = withTarget.filter((row) => row.met === true).length;
  return `bench ${mode}: ${ran}/${rows.length} cases ran, targets met ${met}/${withTarget.length}`;
}

/** Writes bench/results/<timestamp>.json and returns its path. */
export interface Report {
  mode: string;
  startedAt: Date;
  wallSeconds: number;
  sizes: Sizes;
  rows: readonly Row[];
  timeline: readonly { labels: readonly string[]; seconds: number; loadAverageBefore: number }[];
}

export async function writeResults(report: Report): Promise<string> {
  const folder = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(folder, { recursive: true });
  const file = `${folder}${report.startedAt.toISOString().replace(/[:.]/g, '-')}.json`;
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model, totalMemoryGiB: totalmem() / 2 ** 30, node: process.version };
  await writeFile(
    file,
    `${JSON.stringify({ ...report, startedAt: report.startedAt.toISOString(), machine, code: codeVersion() }, null, 2)}\n`,
  );
  return file;
}

/** The figures belong to the code they measured: the commit and any files changed since. */
function codeVersion(): { commit: string; changed: string[] } | null {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return {
      commit: git('rev-parse', 'HEAD').trim(),
      changed: git('status', '--porcelain', '--', 'src', 'migrations').split('\n').filter(Boolean),
    };
  } catch {
    return null;
  }
}
