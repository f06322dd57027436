import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that took longest in a measured full run (`npx vitest run`, 3 workers, 2026-12-04),
 * longest first. Vitest orders by the durations it cached in an earlier run, and by size on a fresh
 * clone (CI), where a long file drawn last would run alone at the end while the other workers idle:
 * the small command-line files, drawn last, made the run's last two minutes.
 */
const SLOW_FIRST = [
  'test/command-line.test.ts',
  'test/embedded-exits.test.ts',
  'test/command-line-errors.test.ts',
  'test/bulk-boundary.test.ts',
  'test/cluster-cache.test.ts',
  'test/start-anywhere.test.ts',
  'test/outage.test.ts',
  'test/boundary.test.ts',
  'test/webhooks-crash.test.ts',
  'test/schema-compatibility.test.ts',
  'test/failover.test.ts',
  'test/rollout-streams.test.ts',
  'test/text-inputs.test.ts',
  'test/metrics-promtool.test.ts',
  'test/purge-crash.test.ts',
  'test/streams.test.ts',
  'test/anonymous-budgets.test.ts',
];

/** Vitest's order, with the known slow files first: the run's tail is made of short files. */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = SLOW_FIRST.findIndex((name) => file.moduleId.endsWith(`/${name}`));
      return at < 0 ? SLOW_FIRST.length : at;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
