import { fork, type ChildProcess } from 'node:child_process';

export interface Refusers {
  urls: string[];
  stop(): Promise<void>;
}

/**
 * `count` processes that refuse every request at no cost beyond HTTP itself (refuser-child.ts):
 * what any limiter must at least pay to answer a flood on these cores. Case 22 floods them in
 * place of the servers, for the floor of its p99 ratio.
 */
export async function startRefusers(count: number): Promise<Refusers> {
  const children: ChildProcess[] = [];
  const stopOne = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.send('stop');
    });
  const stop = async () => void (await Promise.all(children.map(stopOne)));
  try {
    const urls = await Promise.all(
      Array.from({ length: count }, () => {
        const child = fork(new URL('./refuser-child.ts', import.meta.url), []);
        children.push(child);
        return new Promise<string>((resolve, reject) => {
          child.once('message', (url) => resolve(String(url)));
          child.once('exit', (code) => reject(new Error(`refuser exited with ${code}`)));
        });
      }),
    );
    return { urls, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
