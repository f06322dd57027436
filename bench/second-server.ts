import type { App } from '../src/app.js';
import { Metrics } from '../src/observability/metrics.js';
import type { RequestPipeline } from '../src/server/request-pipeline.js';
import { createTransports } from '../src/server/transports.js';
import type { NamedPlugin } from '../src/server/yoga.js';

export interface SecondServer {
  /** Its GraphQL endpoint. */
  url: string;
  /** Drains and closes it (before the app stops: it serves with the app's services). */
  close(): Promise<void>;
}

/**
 * Another server over a running app: its transports built again from the options the app built
 * its own from, with the request pipeline `change` makes of it. The bench prices layers this way;
 * the app has no switch for it. The server's own metrics registry: the app's already holds the
 * gauges a server registers.
 */
export async function secondServer(app: App, change: (pipeline: RequestPipeline) => RequestPipeline): Promise<SecondServer> {
  const options = app.transportOptions;
  const transports = createTransports({
    ...options,
    services: { ...options.services, metrics: new Metrics() },
    pipeline: change(options.pipeline),
  });
  const { url } = await transports.listen();
  transports.startSampling();
  return {
    url,
    async close() {
      transports.stopAccepting();
      await transports.drain();
      transports.stopSampling();
    },
  };
}

/** `plugins` with the one named `name` replaced; throws when there is none (a renamed layer must not go unnoticed). */
export function replacePlugin(plugins: readonly NamedPlugin[], name: string, plugin: NamedPlugin['plugin']): NamedPlugin[] {
  if (!plugins.some((named) => named.name === name)) throw new Error(`no request layer named ${name}`);
  return plugins.map((named) => (named.name === name ? { name, plugin } : named));
}

/** `plugins` without those named in `names`; throws when one is missing. */
export function withoutPlugins(plugins: readonly NamedPlugin[], names: readonly string[]): NamedPlugin[] {
  const missing = names.filter((name) => !plugins.some((named) => named.name === name));
  if (missing.length > 0) throw new Error(`no request layer named ${missing.join(', ')}`);
  return plugins.filter((named) => !names.includes(named.name));
}
