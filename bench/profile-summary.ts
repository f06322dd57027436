/** A V8 CPU profile (`node --cpu-prof`), as much of it as the summary reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const TOP = 25;

/**
 * Self time per function (name, file and line) and per package, from the samples between `from`
 * and `to` (µs, the monotonic clock V8 stamps with), with the busy time per call.
 */
export function summarise(profile: CpuProfile, from: number, to: number, calls: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const self = new Map<string, number>();
  const packages = new Map<string, number>();
  let at = profile.startTime;
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i]!;
    at += delta;
    if (at < from || at > to) return;
    const frame = byId.get(id)!;
    if (frame.functionName === '(idle)') {
      idle += delta;
      return;
    }
    total += delta;
    const key = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + delta);
    packages.set(packageOf(frame), (packages.get(packageOf(frame)) ?? 0) + delta);
  });
  const share = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  const top = (map: Map<string, number>, n: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => `${share(us)}  ${name}`)
      .join('\n');
  return [
    `busy ${(total / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms; busy per call ${(total / 1000 / calls).toFixed(3)} ms`,
    '',
    'by package (self time):',
    top(packages, 15),
    '',
    `top ${TOP} functions (self time):`,
    top(self, TOP),
    '',
  ].join('\n');
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const source = url.indexOf('/src/');
  return source >= 0 ? url.slice(source + 1) : url;
}

function packageOf(frame: { functionName: string; url: string }): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const modules = frame.url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = frame.url.slice(modules + 'node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (frame.url.startsWith('node:')) return 'node:*';
  const source = frame.url.indexOf('/src/');
  return source >= 0
    ? frame.url
        .slice(source + 1)
        .split('/')
        .slice(0, 2)
        .join('/')
    : frame.url;
}
