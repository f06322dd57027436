import { describe, expect, it } from 'vitest';
import { lifecycle, partOf, StoppedWhileStartingError, type Part } from '../src/util/lifecycle.js';
import { within } from './support/bounded.js';

type Behaviour = Record<string, { start?: () => Promise<void>; stop?: () => Promise<void> }>;

/** Parts that write what they do to `log`; `behaviour` makes one of them refuse or wait. */
function recorded(names: Array<string | Part>, behaviour: Behaviour = {}) {
  const log: string[] = [];
  const parts: Part[] = recordedParts(names, log, behaviour);
  const failedStops: string[] = [];
  return { log, failedStops, app: lifecycle(parts, { onStopFailed: (name) => failedStops.push(name) }) };
}

/** Parts named in `names` that write to `log`; a Part given as it is (a partOf) is kept. */
function recordedParts(names: Array<string | Part>, log: string[], behaviour: Behaviour = {}): Part[] {
  return names.map(
    (name): Part =>
      typeof name !== 'string'
        ? name
        : {
            name,
            async start() {
              log.push(`start ${name}`);
              await behaviour[name]?.start?.();
            },
            async stop() {
              log.push(`stop ${name}`);
              await behaviour[name]?.stop?.();
            },
          },
  );
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

  it("a stop that hangs says which part it waits on: activity(), onSlowStop, and a bounded teardown's error", async () => {
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

  describe('a part made of parts (partOf)', () => {
    it('starts its parts in order within the list, and stops them in reverse within it', async () => {
      const log: string[] = [];
      const { log: outer, app } = recorded(['a', partOf('b', recordedParts(['b1', 'b2'], log)), 'c']);
      await app.start();
      await app.stop();
      expect(outer).toEqual(['start a', 'start c', 'stop c', 'stop a']);
      expect(log).toEqual(['start b1', 'start b2', 'stop b2', 'stop b1']);
    });

    it('a refused start stops its own parts already started, then the list stops the parts before it', async () => {
      const refusal = new Error('b3 refused');
      const log: string[] = [];
      const b = partOf('b', recordedParts(['b1', 'b2', 'b3'], log, { b3: { start: () => Promise.reject(refusal) } }));
      const { log: outer, app } = recorded(['a', b, 'c']);
      await expect(app.start()).rejects.toBe(refusal);
      expect(log).toEqual(['start b1', 'start b2', 'start b3', 'stop b2', 'stop b1']);
      expect(outer).toEqual(['start a', 'stop a']);
      await app.stop();
      expect(log).toHaveLength(5);
    });

    it('a stop while it starts stops its part being started and those before, and starts no later one', async () => {
      let release: () => void = () => undefined;
      const log: string[] = [];
      const b = partOf(
        'b',
        recordedParts(['b1', 'b2', 'b3'], log, {
          b2: { start: () => new Promise<void>((resolve) => (release = resolve)), stop: async () => release() },
        }),
      );
      const { app } = recorded(['a', b, 'c']);
      const starting = app.start();
      await new Promise((resolve) => setImmediate(resolve));
      await app.stop();
      await expect(starting).rejects.toBeInstanceOf(StoppedWhileStartingError);
      expect(log).toEqual(['start b1', 'start b2', 'stop b2', 'stop b1']);
    });

    it('a part of it that fails to stop does not keep the others open; the list hears of the first failure as its own', async () => {
      const log: string[] = [];
      const b = partOf('b', recordedParts(['b1', 'b2'], log, { b2: { stop: () => Promise.reject(new Error('b2 stuck')) } }));
      const { failedStops, app } = recorded(['a', b]);
      await app.start();
      await expect(app.stop()).rejects.toThrow('b2 stuck');
      expect(log.slice(2)).toEqual(['stop b2', 'stop b1']);
      expect(failedStops).toEqual(['b']);
    });
  });
});
