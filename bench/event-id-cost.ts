import type { Row } from './case.js';
import { rate } from './format.js';
import type { LoadResult } from './load.js';

/** How much slower the same signals go with event ids: throughput without over throughput with, from arms of the same run. */
export function eventIdCost(label: string, without: LoadResult, withIds: LoadResult, perCall: number): Row {
  const ratio = without.perSecond / withIds.perSecond;
  return {
    case: label,
    figure: `with eventIds ${rate(withIds, 'signals', perCall)}`,
    ceiling: `without ${rate(without, 'signals', perCall)}`,
    ratio,
    target: '≤ 1.20',
    met: ratio <= 1.2,
    details: { withEventIds: withIds, withoutEventIds: without },
  };
}
