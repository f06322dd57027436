import { U64HashSet } from '../../src/membership/cache/u64-hash-set.js';
import type { InProcessCase } from '../case.js';
import { inFreshProcess } from '../fresh-process.js';
import { num } from '../format.js';
import { seededRandom } from '../zipf.js';

const LABEL = '5. gate lookup, U64HashSet.has';
const PROBES = 8_192;

/**
 * ns per `has()`, half hits and half misses, against a plain Set<string> of the same keys (context
 * only: it costs ~5× the memory per key). The probe strings are a few thousand fresh copies, so
 * they stay in cache like the id just parsed from a request; the table itself is probed at random.
 * The details add hits over all keys in random order, where reading each cold string adds a
 * cache miss of its own.
 */
export const gateLookupInProcess: InProcessCase = {
  labels: [LABEL],
  async run(sizes) {
    const random = seededRandom(5);
    const randomU64 = () => ((BigInt(Math.floor(random() * 2 ** 32)) << 32n) | BigInt(Math.floor(random() * 2 ** 32))).toString();
    const keys = Array.from({ length: sizes.gateKeys }, randomU64);
    const plain = new Set(keys);
    const set = new U64HashSet();
    for (const key of keys) set.add(key);
    const hits = Array.from({ length: PROBES }, () => BigInt(keys[Math.floor(random() * keys.length)]!).toString());
    const misses: string[] = [];
    while (misses.length < PROBES) {
      const key = randomU64();
      if (!plain.has(key)) misses.push(key);
    }

    const rounds = Math.max(1, Math.round(sizes.gateLookups / PROBES / 2));
    const u64 = {
      hit: nsPerLookup((key) => set.has(key), hits, rounds, true),
      miss: nsPerLookup((key) => set.has(key), misses, rounds, false),
    };
    const strings = {
      hit: nsPerLookup((key) => plain.has(key), hits, rounds, true),
      miss: nsPerLookup((key) => plain.has(key), misses, rounds, false),
    };
    const coldHit = nsPerLookup((key) => set.has(key), shuffle(keys, random), 1, true);
    const mixed = (u64.hit + u64.miss) / 2;
    const mixedStrings = (strings.hit + strings.miss) / 2;
    return [
      {
        case: LABEL,
        figure: `${num(mixed, 1)} ns (hit ${num(u64.hit, 1)}, miss ${num(u64.miss, 1)}; ${num(keys.length)} keys)`,
        ceiling: `Set<string> ${num(mixedStrings, 1)} ns`,
        ratio: mixed / mixedStrings,
        target: '≤ 100 ns',
        met: mixed <= 100,
        details: {
          keys: keys.length,
          lookups: rounds * PROBES * 2,
          u64HashSetNs: u64,
          setOfStringsNs: strings,
          u64ColdStringHitNs: coldHit,
          tableBytes: set.byteLength,
        },
      },
    ];
  },
};

/** In a process of its own: nanoseconds are about the table, not about what ran before. */
export const gateLookup = inFreshProcess(gateLookupInProcess, new URL(import.meta.url), 'gateLookupInProcess');

/** After one untimed round (JIT), times `rounds` passes and checks every answer. */
function nsPerLookup(has: (key: string) => boolean, keys: readonly string[], rounds: number, expected: boolean): number {
  const pass = () => {
    let found = 0;
    for (let i = 0; i < keys.length; i++) if (has(keys[i]!)) found++;
    if (found !== (expected ? keys.length : 0))
      throw new Error(`lookup answered ${found} of ${keys.length} as present, expected ${expected ? 'all' : 'none'}`);
  };
  pass();
  const started = process.hrtime.bigint();
  for (let round = 0; round < rounds; round++) pass();
  return Number(process.hrtime.bigint() - started) / (rounds * keys.length);
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
