import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md's code map has a row for every folder of src/ (its first cell names
 * `src/<folder>/`), and names each folder below one in that row (`cache/` or `src/membership/cache/`),
 * so a new folder cannot go unmapped and a merge cannot drop a row unnoticed.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The folders under src/ holding tracked or new files (ignored ones left out), as `src/a/b/`. */
const SRC_FOLDERS = [
  ...new Set(
    execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'src'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file && existsSync(path.join(ROOT, file)))
      .flatMap((file) =>
        file
          .split('/')
          .slice(1, -1)
          .map((_, depth, parts) => `src/${parts.slice(0, depth + 1).join('/')}/`),
      ),
  ),
].sort();

interface Row {
  /** The code spans of the first cell (`src/ids/`, `src/time/`, …). */
  names: string[];
  /** Every code span of the row. */
  spans: string[];
}

function codeMapRows(markdown: string): Row[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Code map\n'));
  if (!section) throw new Error('docs/architecture.md has no "## Code map" section');
  const spans = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => ({ names: spans(line.split(' | ')[0]!), spans: spans(line) }));
}

/** The folders of src/ the code map leaves out: with no row, or not named in their top folder's row. */
function unmapped(folders: string[], rows: Row[]): string[] {
  return folders.filter((folder) => {
    const [, top, ...below] = folder.split('/').slice(0, -1);
    const own = rows.find((row) => row.names.includes(`src/${top}/`));
    if (!own) return true;
    if (below.length === 0) return false;
    const relative = `${below.join('/')}/`;
    return (
      !rows.some((row) => row.names.includes(folder)) &&
      !own.spans.some((span) => span === relative || span === folder || span.startsWith(relative))
    );
  });
}

describe("docs/architecture.md's code map", () => {
  const rows = codeMapRows(readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8'));

  it('reads the folders of src/ and the rows of the map', () => {
    expect(SRC_FOLDERS).toEqual(expect.arrayContaining(['src/api/', 'src/membership/', 'src/membership/cache/', 'src/db/sql/history/']));
    expect(rows.flatMap((row) => row.names)).toEqual(expect.arrayContaining(['src/app.ts', 'src/server/', 'src/ids/', 'src/util/']));
  });

  it('has a row for every folder under src/', () => {
    expect(unmapped(SRC_FOLDERS, rows)).toEqual([]);
  });

  it('would fail for a folder without a row', () => {
    const withoutApi = rows.filter((row) => !row.names.includes('src/api/'));
    expect(unmapped(SRC_FOLDERS, withoutApi)).toEqual(['src/api/']);
    expect(unmapped([...SRC_FOLDERS, 'src/membership/ledger/'], rows)).toEqual(['src/membership/ledger/']);
    expect(unmapped([...SRC_FOLDERS, 'src/queue/'], rows)).toEqual(['src/queue/']);
  });
});
