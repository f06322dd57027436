import fc from 'fast-check';

/** The histories the membership model runs: who left first, then writes, deliveries, faults and reads. */

/** Small on purpose (collisions are the point); 0 and 2^64-1 are the hash set's edge keys. */
export const USERS = ['0', '1', '2', '3', '4294967296', '18446744073709551615'] as const;

export type Action =
  | { t: 'leave' | 'rejoin' | 'insertLeft' | 'insertActive' | 'delete'; user: number }
  | { t: 'transaction'; writes: { user: number; leave: boolean }[] }
  | { t: 'burn' }
  | { t: 'deliver'; n: number }
  | { t: 'duplicate'; i: number }
  | { t: 'stale'; i: number }
  | { t: 'silent' }
  | { t: 'lose' }
  | { t: 'connect' }
  | { t: 'read'; fail: boolean }
  | { t: 'backstop' }
  | { t: 'wait' };

export interface Scenario {
  /** Users who left before the instance started. */
  initiallyLeft: number[];
  actions: Action[];
}

const user = fc.integer({ min: 0, max: USERS.length - 1 });

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constantFrom('leave' as const, 'rejoin' as const), user }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constantFrom('insertLeft' as const, 'insertActive' as const, 'delete' as const), user }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('transaction' as const),
      writes: fc.array(fc.record({ user, leave: fc.boolean() }), { minLength: 2, maxLength: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'burn' as const }) },
  { weight: 6, arbitrary: fc.record({ t: fc.constant('deliver' as const), n: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constantFrom('duplicate' as const, 'stale' as const), i: fc.nat(50) }) },
  { weight: 1, arbitrary: fc.constant({ t: 'silent' as const }) },
  { weight: 2, arbitrary: fc.constant({ t: 'lose' as const }) },
  { weight: 3, arbitrary: fc.constant({ t: 'connect' as const }) },
  { weight: 7, arbitrary: fc.constant({ t: 'read' as const, fail: false }) },
  { weight: 1, arbitrary: fc.constant({ t: 'read' as const, fail: true }) },
  { weight: 2, arbitrary: fc.constant({ t: 'backstop' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'wait' as const }) },
);

export const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  initiallyLeft: fc.subarray(USERS.map((_, i) => i)),
  actions: fc.array(actionArb, { maxLength: 120, size: 'max' }),
});
