import type { LoadResult } from './load.js';

export function num(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function ms(value: number): string {
  return `${num(value, value < 10 ? 2 : 1)} ms`;
}

/** "12,345 <unit>/s (p50 1.20 ms, p99 9.80 ms)"; latencies are per request, i.e. per call of `perRequest` units. */
export function rate(result: LoadResult, unit: string, perRequest = 1): string {
  const per = perRequest > 1 ? 'per call ' : '';
  return `${num(result.perSecond * perRequest)} ${unit}/s (${per}p50 ${ms(result.p50Ms)}, p99 ${ms(result.p99Ms)})`;
}
