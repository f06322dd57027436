import { declaredSettings } from './declared.js';
import { configuration } from './schema.js';

/**
 * Variables that look like settings but are none, e.g. `WEBHOOK_TIMEOUT` or `PORTT`: each is ignored,
 * which an operator would not notice. A near miss is within a small edit distance of a declared name,
 * or shares a prefix that several declared names share (`WEBHOOK_`, `FAIR_SHARE_`, …). NODE_ and
 * OTEL_ are left out of the prefix rule: Node.js and OpenTelemetry read many variables of their own.
 */
const DECLARED = declaredSettings(configuration).map((setting) => setting.env);
const FOREIGN_FAMILIES = new Set(['NODE', 'OTEL']);
const FAMILIES = [...new Set(DECLARED.map(family))].filter(
  (prefix) => !FOREIGN_FAMILIES.has(prefix) && DECLARED.filter((name) => family(name) === prefix).length > 1,
);

export interface NearMiss {
  variable: string;
  /** The declared name closest to it. */
  suggestion: string;
}

export function nearMisses(environment: Record<string, string | undefined>): NearMiss[] {
  const declared = new Set(DECLARED);
  return Object.keys(environment)
    .filter((variable) => !declared.has(variable) && /^[A-Z][A-Z0-9_]*$/.test(variable))
    .flatMap((variable) => {
      const [closest] = DECLARED.map((name) => ({ name, distance: editDistance(variable, name) })).sort((a, b) => a.distance - b.distance);
      // One edit per four characters, at most two: PORTT is PORT misspelt, HOST is not PORT.
      const close = closest!.distance <= Math.min(2, Math.floor(closest!.name.length / 4));
      return close || FAMILIES.includes(family(variable)) ? [{ variable, suggestion: closest!.name }] : [];
    });
}

/** "WEBHOOK_TIMEOUT is not a setting (did you mean WEBHOOK_TIMEOUT_MS?); it is ignored" */
export function nearMissWarning({ variable, suggestion }: NearMiss): string {
  return `${variable} is not a setting (did you mean ${suggestion}?); it is ignored. The settings: docs/settings.md`;
}

function family(name: string): string {
  return name.split('_')[0]!;
}

/** Levenshtein distance (insertions, deletions, substitutions), over two short names. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
