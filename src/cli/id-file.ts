import { u64Problem } from '../ids/u64.js';

/** A file of ids that is refused whole: its message names every bad line. */
export class IdFileError extends Error {}

/** How many bad lines a refusal lists before it says how many more there are. */
const LISTED_PROBLEMS = 20;

/**
 * The user ids of a file, one a line, in file order: blank lines and `#` comments (a whole line or
 * the rest of one) are skipped, spaces around an id ignored. Any line that is no UInt64, or repeats
 * an id, refuses the whole file, naming each such line, so nothing is written for half a list.
 */
export function idsOfFile(name: string, text: string): string[] {
  const ids: string[] = [];
  const firstLine = new Map<string, number>();
  const problems: string[] = [];
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    const id = line.replace(/#.*/, '').trim();
    if (id === '') continue;
    const lineNumber = index + 1;
    const problem = u64Problem(id);
    const earlier = firstLine.get(id);
    if (problem !== null) problems.push(`line ${lineNumber}: ${JSON.stringify(id)} ${problem}`);
    else if (earlier !== undefined) problems.push(`line ${lineNumber}: ${id} repeats line ${earlier}`);
    else {
      firstLine.set(id, lineNumber);
      ids.push(id);
    }
  }
  if (problems.length > 0) {
    const more = problems.length > LISTED_PROBLEMS ? [`… and ${problems.length - LISTED_PROBLEMS} more`] : [];
    throw new IdFileError(
      `${name}: nothing written, ${problems.length} bad line(s):\n  ${[...problems.slice(0, LISTED_PROBLEMS), ...more].join('\n  ')}`,
    );
  }
  if (ids.length === 0) throw new IdFileError(`${name}: no user ids in it, nothing written`);
  return ids;
}
