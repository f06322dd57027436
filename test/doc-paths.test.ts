import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every repository path the README and docs/ name exists: relative links (from the file that links)
 * and paths in code spans and code blocks (from the root). A path is a word with a slash whose first
 * part is one of the repository's own top-level entries (`src/app.ts`, `docs/`, `test/oidc-*.test.ts`),
 * or a folder of src/ (drawings say "paths under src/": `membership/cache/membership-sync`), so prose,
 * URLs and media types never count. Globs must match a file; a module may be named without `.ts`.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Tracked and new files, ignored ones (dist/, node_modules/, .data/) left out. */
const FILES = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file && existsSync(path.join(ROOT, file)));
const TOP_LEVEL = new Set(FILES.map((file) => file.split('/')[0]!));
const SRC_FOLDERS = new Set(
  FILES.filter((file) => file.startsWith('src/') && file.split('/').length > 2).map((file) => file.split('/')[1]!),
);

const PATH_WORD = /^(?:\.\/)?[\w.@-]+(?:\/[\w.@*<>-]+)+\/?$/;

function exists(candidate: string): boolean {
  // A placeholder (`src/db/sql/<name>.sql`) stands for any name, as a glob's star does.
  const pattern = candidate
    .replace(/^\.\//, '')
    .replace(/\/$/, '')
    .replace(/<[^>/]+>/g, '*');
  if (pattern.includes('*')) {
    const regex = new RegExp(
      `^${pattern
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/]*')}(/|$)`,
    );
    return FILES.some((file) => regex.test(file));
  }
  return ['', '.ts'].some((extension) => existsSync(path.join(ROOT, pattern + extension)));
}

/** What a run writes (`bench/results/`): a path git ignores is named as an output, not as a file of the repository. */
function ignored(candidate: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '--quiet', '--no-index', candidate], { cwd: ROOT });
    return true;
  } catch {
    return false;
  }
}

/** The repository paths one word may name: from the root, or from src/ for a folder of src/ that is not one at the top. */
function candidates(word: string): string[] | null {
  const cleaned = word.replace(/[.,;:)]+$/, '').replace(/:\d+$/, '');
  if (!PATH_WORD.test(cleaned)) return null;
  const first = cleaned.replace(/^\.\//, '').split('/')[0]!;
  if (TOP_LEVEL.has(first)) return SRC_FOLDERS.has(first) ? [cleaned, `src/${cleaned}`] : [cleaned];
  if (SRC_FOLDERS.has(first)) return [`src/${cleaned}`];
  return null;
}

interface Named {
  file: string;
  line: number;
  text: string;
  ok: boolean;
}

function namedPaths(file: string): Named[] {
  const markdown = readFileSync(path.join(ROOT, file), 'utf8');
  const named: Named[] = [];
  const lineOf = (index: number) => markdown.slice(0, index).split('\n').length;
  const code = /```[^\n]*\n([\s\S]*?)```|`([^`\n]+)`/g;
  for (const match of markdown.matchAll(code)) {
    const body = match[1] ?? match[2]!;
    const offset = match.index + match[0].indexOf(body);
    for (const word of body.matchAll(/[^\s"'`=(),|]+/g)) {
      const options = candidates(word[0]);
      if (options) named.push({ file, line: lineOf(offset + word.index), text: word[0], ok: options.some(exists) || ignored(options[0]!) });
    }
  }
  const prose = markdown.replace(code, (block) => block.replace(/[^\n]/g, ' '));
  for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1]!;
    if (/^[a-z][a-z+.-]*:/i.test(target) || target.startsWith('#')) continue;
    const resolved = path.normalize(path.join(path.dirname(file), decodeURI(target.replace(/[#?].*$/, ''))));
    named.push({ file, line: lineOf(match.index), text: target, ok: !resolved.startsWith('..') && existsSync(path.join(ROOT, resolved)) });
  }
  return named;
}

describe('the paths the README and docs/ name', () => {
  const documents = [
    'README.md',
    ...readdirSync(path.join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];
  const named = documents.flatMap(namedPaths);

  it('are found where documents name them', () => {
    // In a code span, a drawing (a code block, paths under src/) and a link: the checker reads each.
    const architecture = named.filter((entry) => entry.file === 'docs/architecture.md').map((entry) => entry.text);
    expect(architecture).toEqual(
      expect.arrayContaining(['src/app.ts', 'server/http.ts', 'operations.md#behind-pgbouncer-transaction-pooling']),
    );
    expect([...new Set(named.map((entry) => entry.file))]).toEqual(
      expect.arrayContaining(['README.md', 'docs/operations.md', 'docs/performance.md']),
    );
  });

  it('exist', () => {
    expect(named.filter((entry) => !entry.ok).map(({ file, line, text }) => `${file}:${line}: ${text}`)).toEqual([]);
  });

  it('would fail for a path that does not exist', () => {
    expect(candidates('src/db/embedded.ts')?.some(exists)).toBe(false);
    expect(candidates('membership/store/leave-and-rejoin.ts')?.some(exists)).toBe(false);
    expect(candidates('test/oidc-*.test.ts')?.some(exists)).toBe(true);
    expect(candidates('test/nothing-*.test.ts')?.some(exists)).toBe(false);
    expect(candidates('src/db/sql/history/<name>.v<N>.sql')?.some(exists)).toBe(true);
    expect(candidates('membership/cache/membership-sync')?.some(exists)).toBe(true);
    expect(candidates('application/json')).toBeNull();
  });
});
