import { describe, expect, it } from 'vitest';
import { lifecycle, StoppedWhileStartingError, type Part } from '../src/util/lifecycle.js';
import { within } from './support/bounded.js';

/** Parts that write what they do to `log`; `behaviour` makes one of them refuse or wait. */
function recorded(names: string[], behaviour: Record<string, { start?: () => Promise<void>; stop?: () => Promise<void> }> = {}) {
  const log: string[] = [];
  const parts: Part[] = names.map((name) => ({
    name,
    async start() {
      log.push(`start ${name}`);
      await behaviour[name]?.start?.();
    },
    async stop() {
      log.push(`stop ${name}`);
      await behaviour[name]?.stop?.();
    },
  }));
  const failedStops: string[] = [];
  return { log, failedStops, app: lifecycle(parts, { onStopFailed: (name) => failedStops.push(name) }) };
}

describe('lifecycle', () => {
  it('starts the parts in order and stops them in reverse, once', async () => {
    const { log, app } = recorded(['a', 'b', 'c']);
    await app.start();
    await Promise.all([app.stop(), app.stop()]);
    await app.stop();
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
  });

  it('a refused start stops exactly the parts already started, in reverse, and rethrows', async () => {
    const refusal = new Error('c refused');
    const { log, app } = recorded(['a', 'b', 'c', 'd'], { c: { start: () => Promise.reject(refusal) } });
    await expect(app.start()).rejects.toBe(refusal);
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop b', 'stop a']);
    await app.stop();
    expect(log).toHaveLength(5);
  });

  it('a part that fails to stop does not keep the others running; stop rejects with the first failure', async () => {
    const { log, failedStops, app } = recorded(['a', 'b', 'c'], {
      b: { stop: () => Promise.reject(new Error('b stuck')) },
      c: { stop: () => Promise.reject(new Error('c stuck')) },
    });
    await app.start();
    await expect(app.stop()).rejects.toThrow('c stuck');
    expect(log.slice(3)).toEqual(['stop c', 'stop b', 'stop a']);
    expect(failedStops).toEqual(['c', 'b']);
  });

  it('a stop while starting stops the part being started too, and starts no later part', async () => {
    let release: () => void = () => undefined;
    const { log, app } = recorded(['a', 'b', 'c'], {
      b: { start: () => new Promise<void>((resolve) => (release = resolve)), stop: async () => release() },
    });
    const starting = app.start();
    await new Promise((resolve) => setImmediate(resolve));
    await app.stop();
    await expect(starting).rejects.toBeInstanceOf(StoppedWhileStartingError);
    expect(log).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  });

  it('a stop that hangs says which part it waits on: activity(), onSlowStop, and a bounded teardown\'s error', async () => {
    let release: () => void = () => undefined;
    const slow: string[] = [];
    const hung = new Promise<void>((resolve) => (release = resolve));
    const parts: Part[] = ['a', 'b', 'c'].map((name) => ({ name, stop: name === 'b' ? () => hung : undefined }));
    const app = lifecycle(parts, { onStopFailed: () => undefined, onSlowStop: (name) => slow.push(name), slowStopMs: 20 });
    await app.start();
    expect(app.activity()).toBeNull();
    const stopping = app.stop();
    await expect(within('the stop', stopping, () => app.activity() ?? 'nothing', 200)).rejects.toThrow(
      /^the stop did not finish within 0\.2 s; still waiting on: stopping "b" \(for 0\.\d s\)$/,
    );
    expect(slow.length).toBeGreaterThan(0);
    expect(new Set(slow)).toEqual(new Set(['b']));
    release();
    await stopping;
    expect(app.activity()).toBeNull();
  });
});
