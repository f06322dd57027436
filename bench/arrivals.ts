/**
 * Lags reported by several processes for the same change, collected as their IPC messages come:
 * `last` resolves with the largest once `count` processes reported, on the message's own turn, so
 * the bench process sleeps in its event loop meanwhile (polling would take a core from the
 * processes it times).
 */
export class Arrivals {
  private readonly lags = new Map<string, number[]>();
  private readonly waiting = new Map<string, { count: number; resolve: (lagUs: number) => void }>();

  record(key: string, lagUs: number): void {
    const lags = this.lags.get(key) ?? [];
    lags.push(lagUs);
    this.lags.set(key, lags);
    this.settle(key);
  }

  /** The largest lag once `count` processes reported `key` (microseconds); rejects after `timeoutMs`. */
  last(key: string, count: number, timeoutMs = 10_000): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(key);
        reject(new Error(`${key} not reported by ${count} processes within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(key, { count, resolve: (lagUs) => (clearTimeout(timer), resolve(lagUs)) });
      this.settle(key);
    });
  }

  private settle(key: string): void {
    const wanted = this.waiting.get(key);
    const lags = this.lags.get(key);
    if (!wanted || !lags || lags.length < wanted.count) return;
    this.waiting.delete(key);
    this.lags.delete(key);
    wanted.resolve(Math.max(...lags));
  }
}
